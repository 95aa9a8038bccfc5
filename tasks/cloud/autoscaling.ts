/**
 * AutoScalingGroups on EC2 Auto Scaling (`@aws-sdk/client-auto-scaling`). Throttling and 5xx are retried by the
 * SDK's standard retry mode; an instance no group holds is AWS's `ValidationError`, an Invalid CloudError.
 */
import { type AutoScalingClient, TerminateInstanceInAutoScalingGroupCommand } from '@aws-sdk/client-auto-scaling';
import type { AutoScalingGroups } from './autoscaling-port.js';
import { AwsAdapter } from './aws-adapter.js';

const TERMINATE = 'TerminateInstanceInAutoScalingGroup';

export class AwsAutoScalingGroups extends AwsAdapter<AutoScalingClient> implements AutoScalingGroups {
  protected readonly service = 'autoscaling';

  terminateInstance(instanceId: string, decrementDesiredCapacity: boolean): Promise<void> {
    return this.call(TERMINATE, instanceId, async () => {
      await this.client.send(
        new TerminateInstanceInAutoScalingGroupCommand({
          InstanceId: instanceId,
          ShouldDecrementDesiredCapacity: decrementDesiredCapacity,
        }),
      );
      this.logger.info('terminated instance in its auto scaling group', { instanceId, decrementDesiredCapacity });
    });
  }
}

/**
 * AutoScalingGroups on EC2 Auto Scaling (`@aws-sdk/client-auto-scaling`). Throttling and 5xx are retried by the
 * SDK's standard retry mode; an instance no group holds is AWS's `ValidationError`, an Invalid CloudError.
 */
import { type AutoScalingClient, TerminateInstanceInAutoScalingGroupCommand } from '@aws-sdk/client-auto-scaling';
import type { Logger } from '../../lib/logger.js';
import type { AutoScalingGroups } from './autoscaling-port.js';
import { awsClassifier } from './aws-errors.js';
import { cloudCall } from './call.js';

const TERMINATE = 'TerminateInstanceInAutoScalingGroup';

export class AwsAutoScalingGroups implements AutoScalingGroups {
  constructor(
    private readonly client: AutoScalingClient,
    private readonly logger: Logger,
  ) {}

  terminateInstance(instanceId: string, decrementDesiredCapacity: boolean): Promise<void> {
    return cloudCall(
      this.logger,
      'autoscaling',
      TERMINATE,
      instanceId,
      awsClassifier('autoscaling', TERMINATE, instanceId),
      async () => {
        await this.client.send(
          new TerminateInstanceInAutoScalingGroupCommand({
            InstanceId: instanceId,
            ShouldDecrementDesiredCapacity: decrementDesiredCapacity,
          }),
        );
        this.logger.info('terminated instance in its auto scaling group', { instanceId, decrementDesiredCapacity });
      },
    );
  }
}

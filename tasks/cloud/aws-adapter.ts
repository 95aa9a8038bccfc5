/**
 * What every adapter over an AWS SDK client shares: its client, its logger, and the one way it calls the
 * client (`cloudCall`, failures classified by AWS's error names for its service).
 */
import type { Logger } from '../../lib/logger.js';
import { awsClassifier } from './aws-errors.js';
import { cloudCall } from './call.js';
import type { CloudService } from './errors.js';

export abstract class AwsAdapter<Client> {
  protected abstract readonly service: CloudService;

  constructor(
    protected readonly client: Client,
    protected readonly logger: Logger,
  ) {}

  protected call<T>(verb: string, resource: string, run: () => Promise<T>): Promise<T> {
    return cloudCall(this.logger, this.service, verb, resource, awsClassifier(this.service, verb, resource), run);
  }
}

/** What every cloud adapter throws: the system, the verb, the resource and the kind of failure. */
import { PythonException } from '../../lib/errors.js';

export type CloudService =
  'route53' | 'acm' | 'eks' | 'autoscaling' | 'kubernetes' | 'dns' | 'smtp' | 'vectordb' | 'pinecone' | 'embeddings';

export type CloudErrorKind = 'NotFound' | 'AccessDenied' | 'Conflict' | 'Throttled' | 'Invalid' | 'Unavailable';

/**
 * What an adapter throws, after its client's own retries: which system, which verb on which resource, and
 * the kind of failure, so a FAILURE result says what failed where. Python sees the class
 * `smarter.apps.infrastructure.CloudError` with that message.
 */
export class CloudError extends PythonException {
  constructor(
    readonly service: CloudService,
    readonly verb: string,
    readonly resource: string,
    readonly kind: CloudErrorKind,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super('CloudError', 'smarter.apps.infrastructure', `${service} ${verb} ${resource}: ${kind}: ${detail}`);
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

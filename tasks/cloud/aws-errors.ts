/**
 * AWS SDK errors (after the SDK's own retries) as CloudErrors: the error's name (AWS's error code) first,
 * its HTTP status next, a failure with no answer at all last.
 */
import { type Classify, isNetworkError, messageOf } from './call.js';
import { CloudError, type CloudErrorKind, type CloudService } from './errors.js';

const BY_NAME: Record<string, CloudErrorKind> = {
  NoSuchHostedZone: 'NotFound',
  NoSuchChange: 'NotFound',
  NoSuchDelegationSet: 'NotFound',
  ResourceNotFoundException: 'NotFound',
  AccessDenied: 'AccessDenied',
  AccessDeniedException: 'AccessDenied',
  UnrecognizedClientException: 'AccessDenied',
  InvalidClientTokenId: 'AccessDenied',
  InvalidSignatureException: 'AccessDenied',
  SignatureDoesNotMatch: 'AccessDenied',
  ExpiredToken: 'AccessDenied',
  ExpiredTokenException: 'AccessDenied',
  CredentialsProviderError: 'AccessDenied',
  Throttling: 'Throttled',
  ThrottlingException: 'Throttled',
  TooManyRequestsException: 'Throttled',
  PriorRequestNotComplete: 'Throttled',
  RequestLimitExceeded: 'Throttled',
  HostedZoneAlreadyExists: 'Conflict',
  ConflictingDomainExists: 'Conflict',
  HostedZoneNotEmpty: 'Conflict',
  ResourceInUseException: 'Conflict',
  ConcurrentModification: 'Conflict',
  InvalidChangeBatch: 'Invalid',
  InvalidInput: 'Invalid',
  InvalidDomainName: 'Invalid',
  InvalidArgument: 'Invalid',
  ValidationException: 'Invalid',
  InvalidParameterException: 'Invalid',
  InvalidArnException: 'Invalid',
  InvalidDomainValidationOptionsException: 'Invalid',
  LimitExceededException: 'Invalid',
  TooManyHostedZones: 'Invalid',
  ServiceUnavailable: 'Unavailable',
  ServiceUnavailableException: 'Unavailable',
  InternalFailure: 'Unavailable',
  InternalError: 'Unavailable',
};

export function kindOfAwsError(err: unknown): CloudErrorKind {
  const name = (err as { name?: unknown } | null)?.name;
  if (typeof name === 'string' && BY_NAME[name]) return BY_NAME[name];
  const status = (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  if (status === 401 || status === 403) return 'AccessDenied';
  if (status === 404) return 'NotFound';
  if (status === 409) return 'Conflict';
  if (status === 429) return 'Throttled';
  if (status !== undefined && status >= 500) return 'Unavailable';
  if (status !== undefined && status >= 400) return 'Invalid';
  // No answer at all is the service being unreachable; anything else without a status is ours (bad config).
  return isNetworkError(err) ? 'Unavailable' : 'Invalid';
}

export function awsClassifier(service: CloudService, verb: string, resource: string): Classify {
  return (err) => {
    const name = (err as { name?: unknown } | null)?.name;
    const code = typeof name === 'string' && name !== 'Error' ? `${name}: ` : '';
    return new CloudError(service, verb, resource, kindOfAwsError(err), `${code}${messageOf(err)}`, { cause: err });
  };
}

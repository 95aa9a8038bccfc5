/**
 * The readiness of the cloud, as Smarter's infrastructure services decide it (`providers/aws/provider.py`
 * `AWSProvider.ready`, `providers/aws/helpers/base.py` `AWSBase`), and Smarter's `is_taskable()`
 * (`smarter/smarter/apps/llmclient/tasks/utils.py`).
 */
import { AwsReadiness, type Readiness, awsCredentialsConfigured, isTaskable } from '../../tasks/cloud/readiness.js';
import { recordingLogger } from '../support/logs.js';

describe("awsCredentialsConfigured (AWSBase.__init__, plus the SDK chain's in-AWS sources)", () => {
  test.each([
    [{}, false],
    // compose.yaml passes the pair through as empty strings when the operator has none
    [{ AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_REGION: 'us-east-1' }, false],
    [{ AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: '' }, false],
    [{ AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 'secret' }, true],
    [{ AWS_PROFILE: 'smarter' }, true],
    [{ AWS_DEPLOYED: 'true' }, true],
    [{ AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/eks.amazonaws.com/serviceaccount/token' }, false],
    [
      {
        AWS_WEB_IDENTITY_TOKEN_FILE: '/var/run/secrets/eks.amazonaws.com/serviceaccount/token',
        AWS_ROLE_ARN: 'arn:aws:iam::1:role/w',
      },
      true,
    ],
    [{ AWS_CONTAINER_CREDENTIALS_FULL_URI: 'http://169.254.170.23/v1/credentials' }, true],
    [{ AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' }, false],
  ] as const)('%j → %s', (env, expected) => {
    expect(awsCredentialsConfigured(env)).toBe(expected);
  });
});

describe('AwsReadiness (AWSProvider.ready)', () => {
  /** Readiness in environment `env`, where STS confirms account 123456789012 and `asked` counts how often. */
  const confirmedBySts = (env: Record<string, string>) => {
    const log = recordingLogger();
    let asked = 0;
    const r = new AwsReadiness(
      async () => (asked++, '123456789012'),
      log,
      () => env,
    );
    return { r, log, asked: () => asked };
  };

  test('without credentials: not ready, and AWS is never asked', async () => {
    const { r, log, asked } = confirmedBySts({});
    expect([await r.provider(), await r.dns(), await r.certificates()]).toEqual([false, false, false]);
    expect(asked()).toBe(0);
    // Logged once, not on every task.
    expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });

  test('credentials that STS confirms: ready, and asked once for the process (as AWSBase keeps its identity)', async () => {
    const { r, log, asked } = confirmedBySts({ AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 's' });
    expect([await r.provider(), await r.dns(), await r.certificates(), await r.provider()]).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(asked()).toBe(1);
    expect(log.lines.map((l) => [l.level, l.message])).toEqual([
      ['info', 'authenticated with AWS, account 123456789012'],
    ]);
  });

  test('credentials that STS refuses: not ready, logged at error once; asked again at the next check, and ready once accepted', async () => {
    const log = recordingLogger();
    let refuse = true;
    let asked = 0;
    const r = new AwsReadiness(
      async () => {
        asked++;
        if (refuse) throw new Error('InvalidClientTokenId: The security token included in the request is invalid.');
        return '123456789012';
      },
      log,
      () => ({ AWS_ACCESS_KEY_ID: 'AKIA', AWS_SECRET_ACCESS_KEY: 'wrong' }),
    );
    expect(await r.provider()).toBe(false);
    expect(await r.dns()).toBe(false);
    expect(asked).toBe(2);
    expect(log.lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      'AWS authentication failed: could not fetch the AWS identity: InvalidClientTokenId: The security token included in the request is invalid.',
    ]);
    refuse = false;
    expect(await r.provider()).toBe(true);
  });
});

describe('isTaskable (utils.is_taskable)', () => {
  const readiness = (provider: boolean, dns: boolean, certificates: boolean): Readiness => ({
    provider: async () => provider,
    dns: async () => dns,
    certificates: async () => certificates,
  });

  test.each([
    [readiness(false, true, true), 'is_taskable() the cloud provider is not ready. Request is not taskable.'],
    [readiness(true, false, true), 'is_taskable() the DNS service is not ready. Request is not taskable.'],
    [readiness(true, true, false), 'is_taskable() the certificate service is not ready. Request is not taskable.'],
  ])('the first service not ready is logged at info, as Smarter words it', async (r, message) => {
    const log = recordingLogger();
    expect(await isTaskable(r, log)).toBe(false);
    expect(log.lines.map((l) => [l.level, l.message])).toEqual([['info', message]]);
  });

  test('all ready: taskable, nothing logged', async () => {
    const log = recordingLogger();
    expect(await isTaskable(readiness(true, true, true), log)).toBe(true);
    expect(log.lines).toEqual([]);
  });
});

/** The EKS adapter through @aws-sdk/client-eks against moto (behind the AWS fault proxy). */
import { CreateClusterCommand, EKSClient } from '@aws-sdk/client-eks';
import { nullLogger } from '../../lib/logger.js';
import { EksNodeGroups } from '../../tasks/cloud/eks.js';
import { CloudError } from '../../tasks/cloud/errors.js';
import { type FaultProxy, startFaultProxy } from '../support/aws-faults.js';
import { type Moto, startMoto, useMotoEnv } from '../support/moto.js';

let moto: Moto;
let proxy: FaultProxy;
let restore: () => void;
let eks: EksNodeGroups;
let client: EKSClient;

beforeAll(async () => {
  moto = await startMoto();
  proxy = await startFaultProxy(moto.endpoint);
  restore = useMotoEnv(proxy.endpoint);
  client = new EKSClient({});
  eks = new EksNodeGroups(client, nullLogger());
  await client.send(
    new CreateClusterCommand({
      name: 'c1',
      roleArn: 'arn:aws:iam::123456789012:role/eks',
      resourcesVpcConfig: { subnetIds: ['subnet-1'] },
    }),
  );
}, 60_000);

afterAll(async () => {
  client?.destroy();
  restore?.();
  await proxy?.stop();
  await moto?.stop();
});

const spec = {
  name: 'smarter-alpha-1-gpu',
  desired: 1,
  max: 3,
  instanceType: 'g6.2xlarge',
  diskSizeGb: 100,
  amiType: 'AL2023_x86_64_NVIDIA',
  capacityType: 'ON_DEMAND',
  nodeRole: 'arn:aws:iam::123456789012:role/nodes',
  subnets: ['subnet-1'],
  labels: { 'smarter.sh/compute': 'gpu' },
  taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NO_SCHEDULE' as const }],
  tags: { 'smarter.sh/compute': 'gpu' },
};

test('a cluster or node group that does not exist is null; create, list, describe and scale a node group', async () => {
  expect(await eks.describeCluster('nope')).toBeNull();
  expect(await eks.describeCluster('c1')).toMatchObject({
    name: 'c1',
    arn: expect.stringMatching(/:cluster\/c1$/) as string,
  });
  expect(await eks.describeNodegroup('c1', spec.name)).toBeNull();
  const made = await eks.createNodegroup('c1', spec);
  expect(made).toMatchObject({ name: spec.name, desired: 1, max: 3, nodeRole: spec.nodeRole, subnets: ['subnet-1'] });
  expect(await eks.listNodegroups('c1')).toEqual([spec.name]);
  await eks.scaleNodegroup('c1', spec.name, 2, 4);
  expect(await eks.describeNodegroup('c1', spec.name)).toMatchObject({
    desired: 2,
    max: 4,
    status: 'ACTIVE',
    arn: expect.stringMatching(/:nodegroup\/c1\/smarter-alpha-1-gpu\//) as string,
  });
});

test('throttling is retried by the SDK until it succeeds; a 403 is AccessDenied at once, naming the operation and the node group', async () => {
  proxy.failNext(2, 'Throttling');
  expect(await eks.listNodegroups('c1')).toEqual([spec.name]);
  expect(proxy.faulted.length).toBe(2);
  proxy.failNext(1, 'AccessDenied');
  const err = (await eks.describeNodegroup('c1', spec.name).catch((e: unknown) => e)) as CloudError;
  expect(err).toBeInstanceOf(CloudError);
  expect(err.kind).toBe('AccessDenied');
  expect(err.message).toMatch(
    /^eks DescribeNodegroup c1\/smarter-alpha-1-gpu: AccessDenied: AccessDeniedException: User: .* is not authorized/,
  );
});

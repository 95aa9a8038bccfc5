/**
 * The outside world of the shipped suite, each part reached by the shipped worker through its production client:
 * a RabbitMQ vhost of its own (the chart's queue names, isolated), MariaDB (a fresh database with Smarter's
 * tables), moto for AWS (Route 53, ACM, EKS, Auto Scaling, STS), the Kubernetes API stand-in through a kubeconfig,
 * the DNS and SMTP servers, two Qdrant servers and a Pinecone project (TLS, trusted through NODE_EXTRA_CA_CERTS),
 * the embeddings, LLM and MCP stand-ins. Nothing here is injected into the worker: it gets addresses only.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  AutoScalingClient,
  CreateAutoScalingGroupCommand,
  CreateLaunchConfigurationCommand,
} from '@aws-sdk/client-auto-scaling';
import { CreateClusterCommand, CreateNodegroupCommand, EKSClient } from '@aws-sdk/client-eks';
import {
  ChangeResourceRecordSetsCommand,
  CreateHostedZoneCommand,
  GetHostedZoneCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
} from '@aws-sdk/client-route-53';
import { ACMClient, RequestCertificateCommand } from '@aws-sdk/client-acm';
import { uniqueName } from './amqp.js';
import { type TestDatabase, createTestDatabase } from './db.js';
import { type DnsStandIn, startDnsServer } from './dns-server.js';
import { type EmbeddingsStandIn, startEmbeddingsStandIn } from './embeddings-standin.js';
import { type KubeStandIn, startKubeStandIn } from './kube-standin.js';
import { type LlmStandIn, startLlmStandIn } from './llm-standin.js';
import { type McpStandIn, startMcpServer } from './mcp-server.js';
import { type Moto, motoEnv, startMoto } from './moto.js';
import { type PineconeStandIn, startPineconeStandIn } from './pinecone-standin.js';
import { type QdrantStandIn, startQdrantStandIn } from './qdrant-standin.js';
import { fernetKey } from './secrets.js';
import { type SmtpStandIn, startSmtpServer } from './smtp.js';
import { makeTestCa } from './tls.js';

const exec = promisify(execFile);

export const ROOT_DOMAIN = 'example.com';
export const ENVIRONMENT = 'alpha';
/** Smarter's API domain and namespace for ENVIRONMENT alpha under ROOT_DOMAIN, platform subdomain `platform`. */
export const API = 'alpha.api.platform.example.com';
export const NS = 'example-platform-alpha';
export const CLUSTER = 'smarter-shipped-cluster';
export const LOAD_BALANCER = ['192.0.2.10'];
export const EMBEDDING_DIM = 8;
export const LLM_API_KEY = 'sk-shipped-0123456789';

async function rabbitmqctl(args: string[]): Promise<string> {
  const { stdout } = await exec('rabbitmqctl', args, { timeout: 60_000 });
  return stdout;
}

export interface QueueCounts {
  messages: number;
  unacked: number;
}

export interface ShippedWorld {
  vhost: string;
  brokerUrl: string;
  t: TestDatabase;
  moto: Moto;
  kube: KubeStandIn;
  dns: DnsStandIn;
  smtp: SmtpStandIn;
  qdrant: QdrantStandIn;
  qdrantB: QdrantStandIn;
  pinecone: PineconeStandIn;
  embeddings: EmbeddingsStandIn;
  llm: LlmStandIn;
  mcp: McpStandIn;
  fernetKey: string;
  caFile: string;
  apiZoneId: string;
  route53: Route53Client;
  acm: ACMClient;
  eks: EKSClient;
  autoscaling: AutoScalingClient;
  /** AWS_* as the SDK's standard chain reads them (moto's endpoint, dummy credentials). */
  awsEnv: Record<string, string>;
  /** Every queue of the vhost: messages ready and unacknowledged. */
  queues(): Promise<Map<string, QueueCounts>>;
  zone(domain: string): Promise<{ id: string; nameServers: string[] }>;
  /** The name servers Route 53 gave the hosted zone (what a customer delegates to). */
  nameServers(zoneId: string): Promise<string[]>;
  record(zoneId: string, name: string, type: string): Promise<string[] | undefined>;
  upsertA(zoneId: string, name: string, values?: string[]): Promise<void>;
  requestCertificate(domain: string): Promise<string>;
  scratch: string;
  stop(): Promise<void>;
}

export async function startShippedWorld(): Promise<ShippedWorld> {
  const vhost = uniqueName('shipped');
  await rabbitmqctl(['add_vhost', vhost]);
  await rabbitmqctl(['set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*']);
  const brokerUrl = `amqp://guest:guest@127.0.0.1:5672/${vhost}`;
  const scratch = mkdtempSync(join(tmpdir(), 'shipped-'));
  const ca = await makeTestCa('shipped');
  const [t, moto, kube, dns, smtp, qdrant, qdrantB, pinecone, embeddings, llm, mcp] = await Promise.all([
    createTestDatabase('shipped'),
    startMoto({ acmValidationWait: 0 }),
    startKubeStandIn({
      defaultNamespace: NS,
      kinds: [
        { apiVersion: 'v1', kind: 'Node', namespaced: false },
        { apiVersion: 'v1', kind: 'PersistentVolume', namespaced: false },
      ],
    }),
    startDnsServer(),
    startSmtpServer(),
    startQdrantStandIn({ apiKey: 'qdrant-key-a' }),
    startQdrantStandIn({ apiKey: 'qdrant-key-b' }),
    startPineconeStandIn({ apiKey: 'pinecone-key', ca }),
    startEmbeddingsStandIn({ apiKey: 'sk-embeddings', dimension: EMBEDDING_DIM }),
    startLlmStandIn({ apiKey: LLM_API_KEY, models: ['gpt-4o', 'gpt-4o-mini'] }),
    startMcpServer({ name: 'weather-server', version: '2.0.1', tools: ['forecast', 'alerts'] }),
  ]);
  const awsEnv = motoEnv(moto.endpoint);
  const aws = {
    region: awsEnv.AWS_REGION,
    endpoint: moto.endpoint,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  };
  const route53 = new Route53Client(aws);
  const acm = new ACMClient(aws);
  const eks = new EKSClient(aws);
  const autoscaling = new AutoScalingClient(aws);

  // The platform's cluster and node group (whose role and subnets the llmhost node groups copy).
  await eks.send(
    new CreateClusterCommand({
      name: CLUSTER,
      roleArn: 'arn:aws:iam::123456789012:role/eks',
      resourcesVpcConfig: { subnetIds: ['subnet-0aaa', 'subnet-0bbb'] },
    }),
  );
  await eks.send(
    new CreateNodegroupCommand({
      clusterName: CLUSTER,
      nodegroupName: 'platform',
      nodeRole: 'arn:aws:iam::123456789012:role/platform-nodes',
      subnets: ['subnet-0aaa', 'subnet-0bbb'],
      scalingConfig: { minSize: 2, maxSize: 4, desiredSize: 2 },
    }),
  );
  await autoscaling.send(
    new CreateLaunchConfigurationCommand({
      LaunchConfigurationName: 'llmhost-nodes',
      ImageId: 'ami-12c6146b',
      InstanceType: 'g6.2xlarge',
    }),
  );
  await autoscaling.send(
    new CreateAutoScalingGroupCommand({
      AutoScalingGroupName: 'eks-shipped',
      LaunchConfigurationName: 'llmhost-nodes',
      MinSize: 0,
      MaxSize: 4,
      DesiredCapacity: 0,
      AvailabilityZones: ['us-east-1a'],
    }),
  );

  const zone = async (domain: string) => {
    const created = await route53.send(
      new CreateHostedZoneCommand({ Name: domain, CallerReference: uniqueName('zone') }),
    );
    const id = (created.HostedZone?.Id ?? '').replace('/hostedzone/', '');
    const got = await route53.send(new GetHostedZoneCommand({ Id: id }));
    return { id, nameServers: got.DelegationSet?.NameServers ?? [] };
  };
  const upsertA = async (zoneId: string, name: string, values = LOAD_BALANCER) => {
    await route53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        ChangeBatch: {
          Changes: [
            {
              Action: 'UPSERT',
              ResourceRecordSet: {
                Name: name,
                Type: 'A',
                TTL: 300,
                ResourceRecords: values.map((Value) => ({ Value })),
              },
            },
          ],
        },
      }),
    );
  };
  const record = async (zoneId: string, name: string, type: string) => {
    const out = await route53.send(
      new ListResourceRecordSetsCommand({ HostedZoneId: zoneId, StartRecordName: name, StartRecordType: type as 'A' }),
    );
    const want = name.replace(/\.$/, '').toLowerCase();
    const r = out.ResourceRecordSets?.find((x) => x.Name?.replace(/\.$/, '').toLowerCase() === want && x.Type === type);
    return r ? (r.ResourceRecords ?? []).map((x) => x.Value ?? '') : undefined;
  };
  const apiZone = await zone(API);
  await upsertA(apiZone.id, API);

  return {
    vhost,
    brokerUrl,
    t,
    moto,
    kube,
    dns,
    smtp,
    qdrant,
    qdrantB,
    pinecone,
    embeddings,
    llm,
    mcp,
    fernetKey: fernetKey(),
    caFile: ca.caFile,
    apiZoneId: apiZone.id,
    route53,
    acm,
    eks,
    autoscaling,
    awsEnv,
    scratch,
    async queues() {
      const out = await rabbitmqctl([
        'list_queues',
        '-p',
        vhost,
        '-q',
        'name',
        'messages_ready',
        'messages_unacknowledged',
      ]);
      const m = new Map<string, QueueCounts>();
      for (const line of out.split('\n')) {
        const [name, ready, unacked] = line.trim().split('\t');
        if (!name || ready === undefined || name === 'name') continue;
        m.set(name, { messages: Number(ready), unacked: Number(unacked ?? 0) });
      }
      return m;
    },
    zone,
    async nameServers(zoneId) {
      return (await route53.send(new GetHostedZoneCommand({ Id: zoneId }))).DelegationSet?.NameServers ?? [];
    },
    record,
    upsertA,
    async requestCertificate(domain) {
      const r = await acm.send(new RequestCertificateCommand({ DomainName: domain, ValidationMethod: 'DNS' }));
      return r.CertificateArn ?? '';
    },
    async stop() {
      for (const c of [route53, acm, eks, autoscaling]) c.destroy();
      await Promise.allSettled([
        kube.stop(),
        dns.stop(),
        smtp.stop(),
        qdrant.stop(),
        qdrantB.stop(),
        pinecone.stop(),
        embeddings.stop(),
        llm.stop(),
        mcp.stop(),
      ]);
      await moto.stop();
      await t.drop();
      await rabbitmqctl(['delete_vhost', vhost]).catch(() => '');
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * `launch_llmhost` copies the A record of the LLMHost's hostname, and `destroy_llmhost` queues
 * `destroy_domain_A_record`, only when the cloud's DNS is ready (Smarter's `smarter/smarter/apps/llmhost/tasks.py`:
 * `create_dns_record` and `destroy_dns_record` ask `dns_enabled()`, i.e. `infrastructure.dns.ready`), through the
 * same readiness as the LLMClient tasks (`tasks/cloud/readiness.ts`). moto, the Kubernetes stand-in and MariaDB.
 */
import type { Readiness } from '../../tasks/cloud/readiness.js';
import { llmclientTasks } from '../../tasks/llmclient/index.js';
import { llmhostTasks } from '../../tasks/llmhost/index.js';
import { CheckRunner } from '../support/check-runner.js';
import { API, type LlmhostWorld, llmhostWorldForFile } from '../support/llmhost-world.js';

const DESTROY = 'smarter.apps.llmhost.tasks.destroy_llmhost';
const LAUNCH = 'smarter.apps.llmhost.tasks.launch_llmhost';
const DESTROY_A = 'smarter.apps.llmclient.tasks.destroy_domain_a_record.destroy_domain_A_record';
// A spec Smarter's parser accepts (vLLM needs a GPU), or destroy_llmhost finds no hostname of Smarter's choosing.
const SPEC = {
  engine: { name: 'vllm' },
  model: { repository: 'meta-llama/Llama-3.1-8B-Instruct' },
  resources: { cpu: '4', memory: '16Gi', gpuCount: 1 },
  network: { ingress: true },
};

let w: LlmhostWorld;
llmhostWorldForFile((world) => (w = world));

const notReady: Readiness = { provider: async () => false, dns: async () => false, certificates: async () => false };

test.each([
  ['ready', true],
  ['not ready', false],
] as const)('own wiring: DNS %s: destroy_domain_A_record queued: %s', async (_state, queued) => {
  const id = await w.newLlmhost({ name: `gate-${String(queued)}`, spec: SPEC });
  const cloud = queued ? w.cloud : { ...w.cloud, readiness: notReady };
  const r = new CheckRunner([...llmhostTasks(w.env), ...llmclientTasks(w.env)], { db: w.t.db, cloud });
  r.send(DESTROY, {}, [id]);
  const run = await r.runOne(r.pending.shift()!);
  expect([run.result, run.error]).toEqual(['inactive', undefined]);
  const hostname = `llmhost-${id}-gate-${String(queued)}.${w.accountNumber}.${API}`;
  expect(r.pending.filter((m) => m.name === DESTROY_A).map((m) => m.kwargs)).toEqual(
    queued ? [{ hostname, api_host_domain: API }] : [],
  );
});

test.each([
  ['ready', true],
  ['not ready', false],
] as const)('own wiring: DNS %s: launch_llmhost copies the A record: %s', async (_state, copied) => {
  await w.newCompute({ name: `gpu-l4-dnsgate-${String(copied)}` });
  const id = await w.newLlmhost({
    name: `launchgate-${String(copied)}`,
    spec: { ...SPEC, compute: `gpu-l4-dnsgate-${String(copied)}` },
  });
  const cloud = copied ? w.cloud : { ...w.cloud, readiness: notReady };
  const r = new CheckRunner([...llmhostTasks(w.env), ...llmclientTasks(w.env)], { db: w.t.db, cloud });
  r.send(LAUNCH, {}, [id]);
  const run = await r.runOne(r.pending.shift()!);
  expect(run.error).toBeUndefined();
  const hostname = `llmhost-${id}-launchgate-${String(copied)}.${w.accountNumber}.${API}`;
  const zone = await w.cloud.route53.findZone(API);
  const record = await w.cloud.route53.getRecord(zone?.id ?? '', hostname, 'A');
  expect(record?.values ?? null).toEqual(copied ? w.loadBalancer : null);
});

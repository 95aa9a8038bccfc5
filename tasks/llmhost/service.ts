/**
 * Smarter's `LLMHostService` as the tasks use it: `launch` (refuse it when a budget locks the LLMHost's compute,
 * owner or account; read its Hugging Face token and API key from Smarter Secrets, generating the key's Secret the
 * first time; apply the resources, mark the LLMHost pending, give its compute the nodes it needs), `observe`
 * (status from the Deployment and its pods, and the health of an active one) and `destroy` (delete the resources
 * by label, the model volume only when purged or not retained, then release the compute).
 */
import { PythonException } from '../../lib/errors.js';
import { CloudError } from '../cloud/errors.js';
import { NOW } from '../db/django.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import { type ComputeState, provisioning, reconcileCompute } from './compute.js';
import {
  DEPLOYED_STATUSES,
  EVENT,
  KINDS,
  LABEL_LLMHOST,
  MANAGED_KINDS,
  NODEGROUP,
  STATUS,
  VOLUME_KIND,
} from './const.js';
import { LLMHostBudgetExceeded, budgetRefusal } from './authorize.js';
import { estimatedCost, probeHealth, uptimeHours } from './health.js';
import { interpret } from './interpret.js';
import { ensureApiKey, hfTokenOf } from './keys.js';
import { endpoints, engineOf, labelSelector, renderResources, resourceName } from './render.js';
import { type LlmhostRow, accountIdOfProfile, allComputes, findCompute, recordEvent, updateLlmhost } from './rows.js';
import {
  type ComputeRow,
  LLMHostConfigurationError,
  type LlmhostSpec,
  compute,
  fits,
  parseSpec,
  podRequests,
} from './spec.js';

type Log = (m: string) => void;

/** Smarter's `LLMHostClusterError`: the Kubernetes cluster cannot be reached, or refuses the resources. */
export class LLMHostClusterError extends PythonException {
  constructor(message: string) {
    super('LLMHostClusterError', 'smarter.apps.llmhost.services.exceptions', message);
  }
}

/** `<base name>.<account number>.<API domain>`: the hostname Smarter picks, and whose DNS record it manages. */
export const defaultHostname = (env: TaskEnv, host: LlmhostRow) =>
  `${resourceName(host.id, host.name)}.${host.accountNumber}.${env.apiDomain}`;

/** The Ingress hostname when Smarter chose it (an Ingress without `network.hostname`), else null. */
export function managedHostname(env: TaskEnv, host: LlmhostRow): string | null {
  try {
    const spec = parseSpec(host.name, host.spec);
    return spec.network.ingress && !spec.network.hostname ? defaultHostname(env, host) : null;
  } catch {
    return null;
  }
}

/** `compute_of`: the LLMHost's compute, chosen and saved the first time (`spec.compute`, else the cheapest that fits). */
async function computeOf(
  deps: SmarterDeps,
  host: LlmhostRow,
  spec: LlmhostSpec,
  accountId: number,
): Promise<ComputeRow> {
  if (host.computeId !== null) {
    const c = await findCompute(deps.db, host.computeId);
    if (c) return c;
  }
  const pod = podRequests(spec);
  const all = await allComputes(deps.db);
  let chosen: ComputeRow | undefined;
  if (spec.compute) {
    const rank = (c: ComputeRow) => (c.userProfileId === host.userProfileId ? 0 : c.accountId === accountId ? 1 : 2);
    chosen = all.filter((c) => c.name === spec.compute).sort((a, b) => rank(a) - rank(b))[0];
    if (!chosen) {
      throw new LLMHostConfigurationError(
        `LLMHost ${host.name}: compute: ${spec.compute} does not exist. Choose one of: ${[...new Set(all.map((c) => c.name))].sort().join(', ')}.`,
      );
    }
    const reasons = fits(pod, chosen);
    if (reasons.length) {
      throw new LLMHostConfigurationError(
        `LLMHost ${host.name}: compute: the LLMHost does not fit a ${chosen.name} node: ${reasons.join('; ')}.`,
      );
    }
  } else {
    let candidates = all.filter((c) => fits(pod, c).length === 0);
    if (!pod.gpus && candidates.some((c) => c.gpuCount === 0)) candidates = candidates.filter((c) => c.gpuCount === 0);
    const price = (c: ComputeRow) => (c.pricePerHour === null ? Number.POSITIVE_INFINITY : Number(c.pricePerHour));
    chosen = candidates.sort((a, b) => price(a) - price(b) || a.name.localeCompare(b.name))[0];
    if (!chosen) {
      throw new LLMHostConfigurationError(
        `LLMHost ${host.name}: No LLMHostCompute fits the LLMHost's resources. Reduce spec.resources, or apply an LLMHostCompute manifest whose node is large enough.`,
      );
    }
  }
  await updateLlmhost(deps.db, host.id, { compute_id: chosen.id });
  host.computeId = chosen.id;
  return chosen;
}

async function accountIdOf(deps: SmarterDeps, host: LlmhostRow): Promise<number> {
  return accountIdOfProfile(deps.db, host.userProfileId);
}

/**
 * `authorize_budgets`: a budget lock on the LLMHost's compute, owner or account refuses the launch before anything
 * is applied; the LLMHost is marked `error` with the lock's message and an `error` event, and the task fails.
 */
async function authorizeBudgets(deps: SmarterDeps, host: LlmhostRow, accountId: number): Promise<void> {
  const refusal = await budgetRefusal(deps.db, host, accountId);
  if (refusal === null) return;
  await updateLlmhost(deps.db, host.id, { status: STATUS.ERROR, status_message: refusal });
  await recordEvent(deps.db, host, EVENT.ERROR, STATUS.ERROR, `Launch refused: ${refusal}`);
  throw new LLMHostBudgetExceeded(refusal);
}

export async function launch(deps: SmarterDeps, env: TaskEnv, host: LlmhostRow, log: Log): Promise<string> {
  const accountId = await accountIdOf(deps, host);
  await authorizeBudgets(deps, host, accountId);
  const spec = parseSpec(host.name, host.spec);
  // Before a compute is chosen or a Secret written: a launch that cannot reach the cluster leaves the row as it was.
  if (!(await clusterReady(deps, env))) throw new LLMHostClusterError('The Kubernetes cluster is not available.');
  const base = resourceName(host.id, host.name);
  const c = await computeOf(deps, host, spec, accountId);
  const hostname = spec.network.ingress ? (spec.network.hostname ?? defaultHostname(env, host)) : null;
  const ctxBase = { base, namespace: env.namespace, spec, hostname };
  const hfToken = await hfTokenOf(deps, env, host, spec);
  const apiKey = engineOf(spec).apiKey ? await ensureApiKey(deps, env, host, spec, log) : null;
  const resources = renderResources({
    ...ctxBase,
    servedName: host.name,
    accountNumber: host.accountNumber,
    clusterIssuer: env.apiDomain,
    platformName: env.platformName,
    compute: c.name,
    taint: compute.taint(c),
    hfToken,
    apiKey: apiKey?.value ?? null,
  });
  try {
    for (const r of resources) await deps.cloud.kube.apply(r);
  } catch (err) {
    const message = (err as Error).message;
    await updateLlmhost(deps.db, host.id, { status: STATUS.ERROR, status_message: message });
    await recordEvent(deps.db, host, EVENT.ERROR, STATUS.ERROR, `Launch failed: ${message}`);
    throw err;
  }
  const urls = endpoints(ctxBase);
  let status: string = STATUS.PENDING;
  await updateLlmhost(deps.db, host.id, {
    // A relaunch of a deployed LLMHost keeps its uptime; any other launch starts it.
    ...(host.deployedAt === null || !DEPLOYED_STATUSES.includes(host.status) ? { deployed_at: NOW } : {}),
    status,
    status_message: 'Launched. Waiting for the inference server to start.',
    replicas: spec.scaling.replicas,
    endpoint_url: urls.endpoint,
    public_url: urls.publicUrl,
    health_check_url: urls.healthCheckUrl,
    api_key_secret_id: apiKey?.secretId ?? null,
  });
  const summary = resources.map((r) => `${r.kind}/${r.metadata.name}`);
  await recordEvent(deps.db, host, EVENT.LAUNCHED, status, `Applied ${summary.join(', ')}`, { resources: summary });
  let state: ComputeState;
  try {
    state = await reconcileCompute(deps, env, c, log);
  } catch (err) {
    const message = `The node group of compute ${c.name} cannot be scaled: ${(err as Error).message}`;
    await updateLlmhost(deps.db, host.id, { status: STATUS.ERROR, status_message: message });
    await recordEvent(deps.db, host, EVENT.ERROR, STATUS.ERROR, message);
    throw err;
  }
  if (state.actions.length) {
    await recordEvent(deps.db, host, EVENT.NODES_SCALED, status, state.actions.join('; '), { compute: c.name });
  }
  if (provisioning(state)) {
    status = STATUS.PROVISIONING;
    await updateLlmhost(deps.db, host.id, { status, status_message: `Compute ${c.name}: ${state.message}` });
  }
  log(`launched ${host.name}: ${summary.join(', ')}`);
  return status;
}

/**
 * Smarter's `cluster.ready`: whether the Kubernetes API answers. Only an API that cannot be reached is "not
 * ready"; any answer, a refusal included, is a cluster the per-LLMHost calls report on.
 */
export async function clusterReady(deps: SmarterDeps, env: TaskEnv): Promise<boolean> {
  try {
    await deps.cloud.kube.list({ ...KINDS.deployment, namespace: env.namespace, labelSelector: LABEL_LLMHOST });
    return true;
  } catch (err) {
    return !(err instanceof CloudError && err.kind === 'Unavailable');
  }
}

/**
 * Checks an LLMHost's status and saves it, recording a `status_changed` event when it changed. With `probe` (as
 * Smarter's `observe(probe=True)`, which refresh_llmhost_status uses and reconcile_llmhost_compute does not), an
 * active LLMHost's health URL is called where the worker can reach it (`env.healthProbes`): a failed check makes
 * it `degraded`, and the result goes to `last_health_ok` and `last_health_check_at`.
 */
export async function observe(
  deps: SmarterDeps,
  env: TaskEnv,
  host: LlmhostRow,
  options: { probe?: boolean } = {},
): Promise<string> {
  const base = resourceName(host.id, host.name);
  const deployment = await deps.cloud.kube.get({ ...KINDS.deployment, name: base, namespace: env.namespace });
  const pods = await deps.cloud.kube.list({
    ...KINDS.pod,
    namespace: env.namespace,
    labelSelector: labelSelector(base),
  });
  const seen = interpret(deployment, pods);
  let { status, message } = seen;
  if (status === STATUS.PENDING && host.computeId !== null) {
    const c = await findCompute(deps.db, host.computeId);
    if (
      c &&
      (c.nodegroupStatus === NODEGROUP.CREATING ||
        c.nodegroupStatus === NODEGROUP.UPDATING ||
        c.readyNodes < c.desiredNodes)
    ) {
      status = STATUS.PROVISIONING;
      message = `Compute ${c.name}: ${c.statusMessage}`;
    }
  }
  let healthy: boolean | null = null;
  if ((options.probe ?? true) && env.healthProbes && status === STATUS.ACTIVE && host.healthCheckUrl) {
    healthy = await probeHealth(host.healthCheckUrl);
    if (!healthy) {
      status = STATUS.DEGRADED;
      message = `${message} The health check at ${host.healthCheckUrl} failed.`;
    }
  }
  await updateLlmhost(deps.db, host.id, {
    status,
    status_message: message,
    ready_replicas: seen.ready,
    ...(healthy === null ? {} : { last_health_check_at: NOW, last_health_ok: healthy }),
  });
  if (status !== host.status) {
    await recordEvent(deps.db, host, EVENT.STATUS_CHANGED, status, `${host.status} -> ${status}: ${message}`, {
      from: host.status,
      to: status,
    });
  }
  return status;
}

export async function destroy(
  deps: SmarterDeps,
  env: TaskEnv,
  host: LlmhostRow,
  purge: boolean,
  log: Log,
): Promise<string> {
  let spec: LlmhostSpec | null = null;
  try {
    spec = parseSpec(host.name, host.spec);
  } catch {
    spec = null;
  }
  const base = resourceName(host.id, host.name);
  const deleteVolume = purge || (spec !== null && !spec.storage.retain);
  const kinds: string[] = [...MANAGED_KINDS, ...(deleteVolume ? [VOLUME_KIND] : [])];
  for (const kind of kinds) {
    const ref = { ...KINDS[kind as keyof typeof KINDS], namespace: env.namespace };
    // An existingClaim is not labeled, so it is never selected.
    for (const o of await deps.cloud.kube.list({ ...ref, labelSelector: labelSelector(base) })) {
      await deps.cloud.kube.delete({ ...ref, name: o.metadata.name });
    }
  }
  // cert-manager writes the TLS Secret without the LLMHost's labels.
  if (spec === null || spec.network.ingress) {
    await deps.cloud.kube.delete({ ...KINDS.secret, name: `${base}-tls`, namespace: env.namespace });
  }
  // Uptime and cost as of the moment before the LLMHost stops being deployed.
  const details = { purge: deleteVolume, uptimeHours: uptimeHours(host), estimatedCost: estimatedCost(host) };
  const message = `Destroyed.${deleteVolume ? '' : ' The model volume was kept.'}`;
  await updateLlmhost(deps.db, host.id, {
    status: STATUS.INACTIVE,
    status_message: message,
    ready_replicas: 0,
    last_health_ok: null,
  });
  await recordEvent(deps.db, host, EVENT.DESTROYED, STATUS.INACTIVE, message, details);
  log(`destroyed ${host.name}, purge=${String(deleteVolume)}`);
  // release_compute: a failure is logged; the reconcile task tries again.
  if (host.computeId !== null) {
    const c = await findCompute(deps.db, host.computeId);
    if (c) {
      try {
        const state = await reconcileCompute(deps, env, c, log);
        if (state.actions.length) {
          await recordEvent(deps.db, host, EVENT.NODES_SCALED, STATUS.INACTIVE, state.actions.join('; '), {
            compute: c.name,
          });
        }
      } catch (err) {
        log(`release of compute ${c.name} failed: ${(err as Error).message}`);
      }
    }
  }
  return STATUS.INACTIVE;
}

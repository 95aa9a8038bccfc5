/**
 * `smarter.apps.infrastructure.tasks.sync_infrastructure_inventory()` (`services/inventory.py`): read-only
 * discovery of the platform's EKS cluster (the cluster, its add-ons and node groups from EKS; nodes, the
 * environment's PersistentVolumes, LoadBalancer Services, Ingresses and cert-manager Certificates from
 * Kubernetes), reconciled with the `infrastructure_infrastructureresource` ledger: what the ledger does not know
 * is recorded created, an active row whose resource is gone is recorded destroyed, a changed id is updated. A type
 * that cannot be listed is left as it is. Returns `{resource type: {found, created, destroyed}}`.
 */
import { periodicTask } from '../env/periodic-task.js';
import type { SmarterDeps, TaskEnv } from '../env/task-env.js';
import type { KubeObject } from '../cloud/kubernetes-port.js';
import type { Queryable } from '../db/database.js';
import { InfrastructureLedger } from './ledger.js';
import { activeRows, setResourceId } from './rows.js';

export interface Discovered {
  name: string;
  id: string;
  billable: boolean;
}

const lbHostname = (o: KubeObject) => {
  const ing = ((o.status as { loadBalancer?: { ingress?: { hostname?: string; ip?: string }[] } } | undefined)
    ?.loadBalancer?.ingress ?? [])[0];
  return ing?.hostname ?? ing?.ip ?? '';
};
const spec = (o: KubeObject) =>
  (o.spec ?? {}) as {
    providerID?: string;
    secretName?: string;
    type?: string;
    csi?: { volumeHandle?: string };
    awsElasticBlockStore?: { volumeID?: string };
    claimRef?: { namespace?: string };
  };

interface Source {
  type: string;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  billable: boolean;
  id(o: KubeObject): string;
  include?(o: KubeObject, namespace: string): boolean;
}

const SOURCES: Source[] = [
  {
    type: 'kubernetes.node',
    apiVersion: 'v1',
    kind: 'Node',
    namespaced: false,
    billable: true,
    id: (o) => spec(o).providerID ?? '',
  },
  {
    type: 'kubernetes.persistentvolume',
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    namespaced: false,
    billable: true,
    id: (o) => spec(o).csi?.volumeHandle ?? spec(o).awsElasticBlockStore?.volumeID ?? '',
    include: (o, ns) => spec(o).claimRef?.namespace === ns,
  },
  {
    type: 'kubernetes.loadbalancer',
    apiVersion: 'v1',
    kind: 'Service',
    namespaced: true,
    billable: true,
    id: lbHostname,
    include: (o) => spec(o).type === 'LoadBalancer',
  },
  {
    type: 'kubernetes.ingress',
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    namespaced: true,
    billable: false,
    id: lbHostname,
  },
  {
    type: 'kubernetes.certificate',
    apiVersion: 'cert-manager.io/v1',
    kind: 'Certificate',
    namespaced: true,
    billable: false,
    id: (o) => spec(o).secretName ?? '',
  },
];

async function discover(
  deps: SmarterDeps,
  env: TaskEnv,
  warn: (m: string) => void,
): Promise<Map<string, Discovered[]>> {
  const out = new Map<string, Discovered[]>();
  const cluster = env.llmhost.awsEksClusterName;
  const eks: [string, boolean, () => Promise<{ name: string; arn: string }[]>][] = [
    [
      'kubernetes.cluster',
      true,
      async () => {
        const c = await deps.cloud.eks.describeCluster(cluster);
        return c ? [c] : [];
      },
    ],
    ['kubernetes.addon', false, () => deps.cloud.eks.listAddons(cluster)],
    [
      'kubernetes.nodegroup',
      false,
      async () => {
        const found: { name: string; arn: string }[] = [];
        for (const name of await deps.cloud.eks.listNodegroups(cluster)) {
          const n = await deps.cloud.eks.describeNodegroup(cluster, name);
          if (n) found.push({ name, arn: n.arn });
        }
        return found;
      },
    ],
  ];
  for (const [type, billable, list] of eks) {
    try {
      out.set(
        type,
        (await list()).filter((r) => r.name).map((r) => ({ name: r.name, id: r.arn, billable })),
      );
    } catch (err) {
      warn(`could not list ${type}: ${(err as Error).message}`);
    }
  }
  for (const s of SOURCES) {
    try {
      const items = await deps.cloud.kube.list({
        apiVersion: s.apiVersion,
        kind: s.kind,
        ...(s.namespaced ? { namespace: env.namespace } : {}),
      });
      out.set(
        s.type,
        items
          .filter((o) => o.metadata.name && (s.include?.(o, env.namespace) ?? true))
          .map((o) => ({ name: o.metadata.name, id: s.id(o), billable: s.billable })),
      );
    } catch (err) {
      warn(`could not list ${s.type}: ${(err as Error).message}`);
    }
  }
  return out;
}

/**
 * Smarter's `reconcile`: what the ledger does not know is recorded created, an active row whose resource is gone
 * is recorded destroyed (through the Kubernetes service's resource signals, so with its provider's name), and an
 * active row whose resource now has an id gets it.
 */
async function reconcile(
  db: Queryable,
  ledger: InfrastructureLedger,
  type: string,
  resources: Discovered[],
): Promise<{ found: number; created: number; destroyed: number }> {
  const found = new Map(resources.map((r) => [r.name, r]));
  const active = new Map((await activeRows(db, ledger.provider, type)).map((r) => [r.name, r]));
  let created = 0;
  let destroyed = 0;
  for (const [name, r] of found) {
    const row = active.get(name);
    if (!row) {
      await ledger.created({ service: 'kubernetes', type, name, id: r.id, billable: r.billable });
      created++;
    } else if (r.id && row.resourceId !== r.id) {
      // e.g. an Ingress recorded by name, which now has its load balancer.
      await setResourceId(db, row.id, r.id);
    }
  }
  for (const [name, row] of active) {
    if (found.has(name)) continue;
    await ledger.destroyed({ service: 'kubernetes', type, name, id: row.resourceId, billable: row.billable });
    destroyed++;
  }
  return { found: found.size, created, destroyed };
}

export const syncInfrastructureInventory = (env: TaskEnv) =>
  periodicTask<Record<string, { found: number; created: number; destroyed: number }>>({
    name: 'smarter.apps.infrastructure.tasks.sync_infrastructure_inventory',
    queue: env.infrastructureQueue,
    async run(ctx) {
      const out: Record<string, { found: number; created: number; destroyed: number }> = {};
      const ledger = new InfrastructureLedger(ctx.deps.db, ctx.logger);
      for (const [type, resources] of await discover(ctx.deps, env, (m) =>
        ctx.logger.warn(`sync_infrastructure_inventory() ${m}`),
      )) {
        out[type] = await reconcile(ctx.deps.db, ledger, type, resources);
      }
      ctx.logger.info('sync_infrastructure_inventory()', { result: out });
      return out;
    },
  });

/**
 * The shipped suite's cases (spec/shipped/smarter-tasks.test.ts) for the llmhost and infrastructure names: EKS in
 * moto, the workload in the Kubernetes stand-in.
 */
import { DescribeNodegroupCommand } from '@aws-sdk/client-eks';
import { waitFor } from './wait.js';
import { API, CLUSTER, LOAD_BALANCER, NS } from './shipped-world.js';
import { w, rows, one, accountNumber } from './shipped-suite.js';
import { type Case, GPU_SPEC, shared, profileRow } from './shipped-case-helpers.js';
import { ebsVolume } from './kube-standin.js';

export const LLMHOST_CASES: Case[] = [
  // llmhost/tasks/__init__.py: EKS in moto, the workload in the Kubernetes stand-in.
  {
    task: 'llmhost.tasks.launch_llmhost',
    phase: 1,
    prepare: async () => {
      shared.compute = await profileRow('llmhost_llmhostcompute', 'gpu-l4-shipped', {
        instance_type: 'g6.2xlarge',
        cpu: 8,
        memory_gb: 32,
        gpu_type: 'L4',
        gpu_count: 1,
        gpu_memory_gb: 24,
        max_nodes: 4,
        price_per_hour: '0.9800',
      });
      const id = await profileRow('llmhost_llmhost', 'llama', {
        spec: JSON.stringify({ ...GPU_SPEC, compute: 'gpu-l4-shipped' }),
        compute_id: shared.compute,
        status: 'inactive',
      });
      shared.llmhost = id;
      const base = `llmhost-${id}-llama`;
      return {
        args: [id],
        state: 'SUCCESS',
        // The node joins and the Deployment becomes ready while reconcile_llmhost_compute checks every 0.3 s.
        meanwhile: async () => {
          await waitFor(
            () => w.kube.object({ apiVersion: 'apps/v1', kind: 'Deployment', name: base, namespace: NS }),
            60_000,
            200,
          );
          w.kube.put(
            {
              apiVersion: 'v1',
              kind: 'Node',
              metadata: { name: `node-${id}`, labels: { 'smarter.sh/compute': 'gpu-l4-shipped' } },
              spec: { providerID: `aws:///us-east-1a/i-shipped${id}` },
              status: { conditions: [{ type: 'Ready', status: 'True' }] },
            },
            'kubelet',
          );
          w.kube.put(
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: base, namespace: NS },
              status: { readyReplicas: 1 },
            },
            'kube-controller-manager',
          );
        },
        check: async (m) => {
          expect(m.result).toBe('provisioning');
          for (const [kind, apiVersion, name] of [
            ['PersistentVolumeClaim', 'v1', `${base}-models`],
            ['Secret', 'v1', base],
            ['Service', 'v1', base],
            ['Ingress', 'networking.k8s.io/v1', base],
          ] as const) {
            expect(w.kube.object({ apiVersion, kind, name, namespace: NS })).toBeDefined();
          }
          const ng = await w.eks.send(
            new DescribeNodegroupCommand({
              clusterName: CLUSTER,
              nodegroupName: `smarter-alpha-${shared.compute}-gpu-l4-shipped`,
            }),
          );
          expect(ng.nodegroup?.labels).toEqual({ 'smarter.sh/compute': 'gpu-l4-shipped' });
          expect(await w.record(w.apiZoneId, `${base}.${accountNumber}.${API}`, 'A')).toEqual(LOAD_BALANCER);
          await waitFor(
            async () => (await one('SELECT status FROM llmhost_llmhost WHERE id = ?', [id]))?.status === 'active',
            60_000,
            250,
          );
        },
      };
    },
  },
  {
    task: 'llmhost.tasks.refresh_llmhost_status',
    phase: 2,
    prepare: async () => ({
      kwargs: { llmhost_id: shared.llmhost },
      state: 'SUCCESS',
      check: async (m) => expect(m.result).toEqual({ llama: 'active' }),
    }),
  },
  {
    task: 'llmhost.tasks.destroy_llmhost',
    phase: 3,
    prepare: async () => {
      const id = shared.llmhost ?? 0;
      const base = `llmhost-${id}-llama`;
      return {
        args: [id],
        state: 'SUCCESS',
        check: async (m) => {
          expect(m.result).toBe('inactive');
          expect(
            w.kube.object({ apiVersion: 'apps/v1', kind: 'Deployment', name: base, namespace: NS }),
          ).toBeUndefined();
          expect(
            w.kube.object({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: `${base}-models`, namespace: NS }),
          ).toBeDefined();
          // destroy_domain_A_record.delay(hostname=…, api_host_domain=…), run by this worker.
          await waitFor(
            async () => (await w.record(w.apiZoneId, `${base}.${accountNumber}.${API}`, 'A')) === undefined,
            30_000,
            250,
          );
        },
      };
    },
  },
  {
    task: 'llmhost.tasks.reconcile_llmhost_compute',
    phase: 1,
    prepare: async () => {
      const id = await profileRow('llmhost_llmhostcompute', 'cpu-idle', {
        instance_type: 'm6i.large',
        max_nodes: 2,
      });
      return {
        args: [id],
        state: 'SUCCESS',
        check: async () => {
          expect(
            (await one('SELECT last_reconciled_at FROM llmhost_llmhostcompute WHERE id = ?', [id]))?.last_reconciled_at,
          ).not.toBeNull();
        },
      };
    },
  },
  {
    task: 'llmhost.tasks.reconcile_llmhost_computes',
    phase: 2,
    prepare: async () => ({
      state: 'SUCCESS',
      check: async (m) => expect(Object.keys(m.result as object)).toContain('gpu-l4-shipped'),
    }),
  },
  // infrastructure/tasks.py
  {
    task: 'infrastructure.tasks.sync_infrastructure_inventory',
    phase: 1,
    prepare: async () => {
      w.kube.put(ebsVolume('pv-later', 'vol-0later', NS, 'cache'));
      return {
        state: 'SUCCESS',
        check: async (m) => {
          expect(typeof m.result).toBe('object');
          const ledger = await rows(
            'SELECT resource_id, status FROM infrastructure_infrastructureresource WHERE resource_id = ?',
            ['vol-0later'],
          );
          expect(ledger).toHaveLength(1);
        },
      };
    },
  },
];

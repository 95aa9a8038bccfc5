/**
 * ManagedNodeGroups on EKS (`@aws-sdk/client-eks`). Throttling and 5xx are retried by the SDK's standard retry
 * mode before anything reaches us; a node group or cluster that does not exist is `null`, not an error.
 */
import {
  type AMITypes,
  type CapacityTypes,
  CreateNodegroupCommand,
  DescribeAddonCommand,
  DescribeClusterCommand,
  DescribeNodegroupCommand,
  type EKSClient,
  ListAddonsCommand,
  ListNodegroupsCommand,
  type Nodegroup as SdkNodegroup,
  UpdateNodegroupConfigCommand,
} from '@aws-sdk/client-eks';
import { AwsAdapter } from './aws-adapter.js';
import type { EksResource, ManagedNodeGroups, Nodegroup, NodegroupSpec } from './eks-port.js';

const notFound = (err: unknown) => (err as { name?: string } | null)?.name === 'ResourceNotFoundException';

export class EksNodeGroups extends AwsAdapter<EKSClient> implements ManagedNodeGroups {
  protected readonly service = 'eks';

  describeCluster(cluster: string): Promise<(EksResource & { status: string }) | null> {
    return this.call('DescribeCluster', cluster, async () => {
      try {
        const out = await this.client.send(new DescribeClusterCommand({ name: cluster }));
        return out.cluster?.name
          ? { name: out.cluster.name, arn: out.cluster.arn ?? '', status: out.cluster.status ?? '' }
          : null;
      } catch (err) {
        if (notFound(err)) return null;
        throw err;
      }
    });
  }

  listAddons(cluster: string): Promise<EksResource[]> {
    return this.call('ListAddons', cluster, async () => {
      const names = await allPages(async (nextToken) => {
        const out = await this.client.send(new ListAddonsCommand({ clusterName: cluster, nextToken }));
        return [out.addons, out.nextToken];
      });
      const addons: EksResource[] = [];
      for (const name of names) {
        const out = await this.client.send(new DescribeAddonCommand({ clusterName: cluster, addonName: name }));
        addons.push({ name, arn: out.addon?.addonArn ?? '' });
      }
      return addons;
    });
  }

  listNodegroups(cluster: string): Promise<string[]> {
    return this.call('ListNodegroups', cluster, () =>
      allPages(async (nextToken) => {
        const out = await this.client.send(new ListNodegroupsCommand({ clusterName: cluster, nextToken }));
        return [out.nodegroups, out.nextToken];
      }),
    );
  }

  describeNodegroup(cluster: string, name: string): Promise<Nodegroup | null> {
    return this.call('DescribeNodegroup', `${cluster}/${name}`, async () => {
      try {
        const out = await this.client.send(new DescribeNodegroupCommand({ clusterName: cluster, nodegroupName: name }));
        return out.nodegroup ? toNodegroup(out.nodegroup) : null;
      } catch (err) {
        if (notFound(err)) return null;
        throw err;
      }
    });
  }

  createNodegroup(cluster: string, spec: NodegroupSpec): Promise<Nodegroup> {
    return this.call('CreateNodegroup', `${cluster}/${spec.name}`, async () => {
      const out = await this.client.send(
        new CreateNodegroupCommand({
          clusterName: cluster,
          nodegroupName: spec.name,
          scalingConfig: { minSize: 0, maxSize: spec.max, desiredSize: spec.desired },
          diskSize: spec.diskSizeGb,
          subnets: spec.subnets,
          instanceTypes: [spec.instanceType],
          // Smarter passes the compute's strings through; EKS refuses an unknown one (InvalidParameterException).
          amiType: spec.amiType as AMITypes,
          nodeRole: spec.nodeRole,
          capacityType: spec.capacityType as CapacityTypes,
          labels: spec.labels,
          taints: spec.taints,
          tags: spec.tags,
        }),
      );
      if (!out.nodegroup) throw new Error('CreateNodegroup answered without a node group');
      this.logger.info('created node group', { cluster, nodegroup: spec.name, desired: spec.desired });
      return toNodegroup(out.nodegroup);
    });
  }

  scaleNodegroup(cluster: string, name: string, desired: number, max: number): Promise<void> {
    return this.call('UpdateNodegroupConfig', `${cluster}/${name}`, async () => {
      await this.client.send(
        new UpdateNodegroupConfigCommand({
          clusterName: cluster,
          nodegroupName: name,
          scalingConfig: { minSize: 0, maxSize: max, desiredSize: desired },
        }),
      );
      this.logger.info('scaled node group', { cluster, nodegroup: name, desired });
    });
  }
}

/** Every item of a listing EKS answers in pages, each page naming the next by its token. */
async function allPages<T>(page: (nextToken?: string) => Promise<[T[] | undefined, string | undefined]>): Promise<T[]> {
  const items: T[] = [];
  let nextToken: string | undefined;
  do {
    const [found, next] = await page(nextToken);
    items.push(...(found ?? []));
    nextToken = next;
  } while (nextToken);
  return items;
}

function toNodegroup(n: SdkNodegroup): Nodegroup {
  return {
    name: n.nodegroupName ?? '',
    arn: n.nodegroupArn ?? '',
    status: n.status ?? '',
    desired: n.scalingConfig?.desiredSize ?? 0,
    max: n.scalingConfig?.maxSize ?? 0,
    issues: (n.health?.issues ?? []).map((i) => `${i.code ?? ''}: ${i.message ?? ''}`),
    nodeRole: n.nodeRole ?? '',
    subnets: n.subnets ?? [],
  };
}

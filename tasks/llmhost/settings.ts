/**
 * What the llmhost and inventory tasks read besides the infrastructure settings, under Smarter's names
 * (`get_env(NAME)`: NAME, then SMARTER_NAME): the EKS cluster and the node role and subnets of new node groups.
 */
import { parsers, type Setting, type ValuesOf } from '../../lib/config/settings.js';
import { both } from '../smarter-env.js';

const setting = <T>(s: Setting<T>): Setting<T> => s;

export const LLMHOST_SETTINGS = {
  awsEksClusterName: setting({
    env: both('AWS_EKS_CLUSTER_NAME'),
    default: 'apps-hosting-service',
    parse: parsers.string,
    doc: 'The EKS cluster whose managed node groups the llmhost tasks manage and the inventory describes.',
  }),
  llmhostNodeRoleArn: setting({
    env: both('LLMHOST_NODE_ROLE_ARN'),
    default: '',
    shownDefault: "that of the cluster's first node group not made by Smarter",
    parse: parsers.string,
    doc: 'IAM role of the node groups the llmhost tasks create.',
  }),
  llmhostNodeSubnetIds: setting<string[]>({
    env: both('LLMHOST_NODE_SUBNET_IDS'),
    default: [],
    shownDefault: "those of the cluster's first node group not made by Smarter",
    parse: parsers.list,
    doc: 'Subnets of the node groups the llmhost tasks create, comma separated.',
  }),
};

export type LlmhostSettings = ValuesOf<typeof LLMHOST_SETTINGS>;

export const LLMHOST_DEFAULTS: LlmhostSettings = Object.fromEntries(
  Object.entries(LLMHOST_SETTINGS).map(([k, s]) => [k, s.default]),
) as LlmhostSettings;

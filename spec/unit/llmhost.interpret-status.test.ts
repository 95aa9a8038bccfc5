/** An LLMHost's status from its Deployment and pods, as Smarter's `observability.interpret` maps them. */
import type { KubeObject } from '../../tasks/cloud/kubernetes-port.js';
import { interpret } from '../../tasks/llmhost/interpret.js';

const deployment = (replicas: number, ready: number, conditions: unknown[] = []): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'llmhost-1-x' },
  spec: { replicas },
  status: { readyReplicas: ready, conditions },
});
const pod = (status: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  status,
});
const waiting = (reason: string, message = '') => ({
  containerStatuses: [{ name: 'engine', state: { waiting: { reason, message } } }],
});

test('no Deployment is inactive; all ready active; some ready degraded, with the first container error', () => {
  expect(interpret(null, [])).toEqual({ status: 'inactive', message: 'Not deployed.', replicas: 0, ready: 0 });
  expect(interpret(deployment(2, 2), [])).toMatchObject({ status: 'active', message: '2/2 replicas ready.' });
  expect(interpret(deployment(2, 1), [pod(waiting('CrashLoopBackOff', 'back-off 5m'))])).toMatchObject({
    status: 'degraded',
    message: '1/2 replicas ready. engine: CrashLoopBackOff: back-off 5m',
  });
});

test('an image that cannot be pulled, or a passed progress deadline with nothing ready, is error; ContainerCreating is not', () => {
  expect(interpret(deployment(1, 0), [pod(waiting('ImagePullBackOff'))])).toMatchObject({
    status: 'error',
    message: 'engine: ImagePullBackOff',
  });
  expect(
    interpret(
      deployment(1, 0, [
        { type: 'Progressing', reason: 'ProgressDeadlineExceeded', message: 'ReplicaSet has timed out progressing.' },
      ]),
      [],
    ),
  ).toMatchObject({
    status: 'error',
    message: 'ReplicaSet has timed out progressing.',
  });
  expect(interpret(deployment(1, 0), [pod({ phase: 'Pending', ...waiting('ContainerCreating') })])).toMatchObject({
    status: 'deploying',
  });
});

test('a running init container is downloading; no pods, or an unschedulable one, pending; otherwise deploying', () => {
  expect(
    interpret(deployment(1, 0), [pod({ initContainerStatuses: [{ name: 'download', state: { running: {} } }] })]),
  ).toMatchObject({ status: 'downloading' });
  expect(interpret(deployment(1, 0), [])).toMatchObject({
    status: 'pending',
    message: 'Waiting for pods to be created.',
  });
  expect(
    interpret(deployment(1, 0), [
      pod({
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available' },
        ],
      }),
    ]),
  ).toMatchObject({
    status: 'pending',
    message: 'Unschedulable: 0/3 nodes are available',
  });
  expect(
    interpret(deployment(1, 0), [
      pod({ phase: 'Running', containerStatuses: [{ name: 'engine', state: { running: {} } }] }),
    ]),
  ).toMatchObject({ status: 'deploying' });
});

/**
 * An HTTP server speaking the subset of the Kubernetes API that the worker calls, reached through the real
 * @kubernetes/client-node with a generated kubeconfig:
 *
 *   const kube = await startKubeStandIn();
 *   process.env.KUBECONFIG = kube.kubeconfig;
 *   kube.setCondition({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', namespace: 'smarter', name: 'x' }, 'Ready', 'True');
 *   kube.failNext({ status: 403, method: 'PATCH' });
 *
 * What it does as the API server does: discovery (`/api/v1`, `/apis/<group>/<version>`, which the client's
 * generic KubernetesObjectApi reads first), server-side apply (`PATCH` with `application/apply-patch+yaml`,
 * `fieldManager` required, conflicts between managers unless `force=true`, create or update, `resourceVersion`
 * bumped only on a change, `generation` on a spec change), create (POST), replace (PUT, `resourceVersion`
 * checked), JSON merge patch, GET, LIST with `labelSelector` (items without kind and apiVersion, as real lists),
 * DELETE, Secret `stringData` folded into base64 `data`, and errors as `Status` objects worded as the API server
 * words them (404 NotFound, 409 Conflict or AlreadyExists, 403 Forbidden, 422 Invalid, 400 BadRequest).
 *
 * Every object is validated before it is stored, whoever writes it (a create, a replace, the result of a patch or
 * of an apply, the test API, cert-manager's ingress-shim): against the schema of its kind with
 * spec/support/kube-validate.ts, a kind no package models refused too. A failure is apimachinery's NewInvalid:
 * 422, `reason: Invalid`, `details.causes[]` of `{ reason, message, field }` with the field's path
 * (`spec.rules[0].host`), and the message `Ingress.networking.k8s.io "x" is invalid: <field>: <error>`.
 *
 * cert-manager is played too (unless `certManager: false`): an Ingress annotated `cert-manager.io/cluster-issuer`
 * (or `cert-manager.io/issuer`) gets, as ingress-shim makes them, a Certificate per `spec.tls` entry, named after
 * its `secretName`, not Ready; `issueCertificate(ref)` then does what issuance does: Ready=True and the
 * `kubernetes.io/tls` Secret.
 *
 * Simplifications: one manager's apply replaces what that manager applied before (lists replaced whole, no
 * merge keys); a strategic merge patch is applied as a JSON merge patch; `status` is kept across writes and set
 * only through the test API; unknown fields are not refused (the schemas allow them).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { validateKubeObject } from './kube-validate.js';
import { replyJson, startStandin } from './http-standin.js';
import {
  ApiError,
  type InjectedFault,
  type JsonObject,
  type StandInRef,
  clone,
  isObject,
  str,
} from './kube-objects.js';
import { type KubeStoreOptions, createKubeStore } from './kube-store.js';
import { kubeServer } from './kube-serve.js';

export type { InjectedFault, JsonObject, KindSpec, StandInRef } from './kube-objects.js';
export { ebsVolume } from './kube-objects.js';

export interface KubeStandIn {
  /** `http://127.0.0.1:PORT`. */
  server: string;
  /** Path of a kubeconfig file pointing at this server (token auth, namespace `defaultNamespace`). */
  kubeconfig: string;
  /** The bearer token the kubeconfig carries; other tokens get 401. */
  token: string;
  /** Stored object, as a GET would return it, or undefined. */
  object(ref: StandInRef): JsonObject | undefined;
  /** Creates or replaces an object as another controller would (cert-manager writing a Secret). */
  put(manifest: JsonObject, manager?: string): JsonObject;
  /** Sets a status condition (a Certificate's Ready), bumping resourceVersion. */
  setCondition(
    ref: StandInRef,
    type: string,
    status: 'True' | 'False' | 'Unknown',
    reason?: string,
    message?: string,
  ): void;
  /** Issues a cert-manager Certificate: Ready=True and its TLS Secret (`spec.secretName`) written. */
  issueCertificate(ref: Omit<StandInRef, 'apiVersion' | 'kind'>): void;
  /** The next request matching gets this error instead of being served. */
  failNext(fault: InjectedFault): void;
  /** Every request, as `METHOD path?query`. */
  readonly requests: string[];
  stop(): Promise<void>;
}

export async function startKubeStandIn(options: KubeStoreOptions = {}): Promise<KubeStandIn> {
  const kube = createKubeStore(options);
  const { store, keyOf, kindOf, apply, stamp, defaultNamespace } = kube;
  const token = randomUUID();
  const faults: InjectedFault[] = [];
  const requests: string[] = [];
  const serve = kubeServer(kube, token, faults);

  const standin = await startStandin(
    async (req, res) => {
      requests.push(`${req.method} ${req.url}`);
      const { code, body } = await serve(req);
      replyJson(res, code, body);
    },
    {
      onError: (res, err) =>
        replyJson(res, 500, new ApiError(500, 'InternalError', `Internal error occurred: ${String(err)}`).status()),
    },
  );
  const serverUrl = standin.origin;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kube-standin-'));
  const kubeconfig = path.join(dir, 'kubeconfig.json');
  // JSON is YAML: the client's loader reads it as a kubeconfig.
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // The client refuses plain HTTP unless TLS verification is off; the stand-in speaks HTTP on loopback.
      clusters: [{ name: 'stand-in', cluster: { server: serverUrl, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'smarter-worker', user: { token } }],
      contexts: [
        { name: 'stand-in', context: { cluster: 'stand-in', user: 'smarter-worker', namespace: defaultNamespace } },
      ],
      'current-context': 'stand-in',
    }),
  );

  const kindOrThrow = (ref: { apiVersion: string; kind: string }) => {
    const k = kindOf(ref.apiVersion, ref.kind);
    if (!k) throw new Error(`the stand-in does not serve ${ref.apiVersion} ${ref.kind}; pass it in options.kinds`);
    return k;
  };
  const standIn: KubeStandIn = {
    server: serverUrl,
    kubeconfig,
    token,
    object(ref) {
      const s = store.get(keyOf(kindOrThrow(ref), ref.namespace ?? defaultNamespace, ref.name));
      return s ? clone(s.object) : undefined;
    },
    put(manifest, manager = 'test-controller') {
      const k = kindOrThrow(manifest as { apiVersion: string; kind: string });
      const meta = (manifest.metadata ?? {}) as JsonObject;
      const namespace = k.namespaced ? str(meta.namespace) || defaultNamespace : undefined;
      return apply(k, namespace, str(meta.name), manifest, manager, true).object;
    },
    setCondition(ref, type, status, reason = status === 'True' ? 'Ready' : 'Pending', message = '') {
      const k = kindOrThrow(ref);
      const s = store.get(keyOf(k, ref.namespace ?? defaultNamespace, ref.name));
      if (!s) throw new Error(`no ${ref.kind} ${ref.namespace ?? defaultNamespace}/${ref.name} to set a condition on`);
      const previous = clone(s.object);
      const st = isObject(s.object.status) ? s.object.status : {};
      const conditions = (Array.isArray(st.conditions) ? st.conditions : []) as JsonObject[];
      const condition = {
        type,
        status,
        reason,
        message,
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        observedGeneration: (s.object.metadata as JsonObject).generation,
      };
      st.conditions = [...conditions.filter((c) => c.type !== type), condition];
      s.object.status = st;
      const result = validateKubeObject(s.object);
      if (!result.ok) {
        s.object = previous;
        throw new Error(`setCondition: ${JSON.stringify(result.errors)}`);
      }
      stamp(s, previous);
    },
    issueCertificate(ref) {
      const full = { apiVersion: 'cert-manager.io/v1', kind: 'Certificate', ...ref };
      standIn.setCondition(full, 'Ready', 'True', 'Ready', 'Certificate is up to date and has not expired');
      const cert = standIn.object(full) as JsonObject;
      const secretName = str((cert.spec as JsonObject | undefined)?.secretName) || ref.name;
      const namespace = ref.namespace ?? defaultNamespace;
      standIn.put(
        {
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'kubernetes.io/tls',
          metadata: { name: secretName, namespace, annotations: { 'cert-manager.io/certificate-name': ref.name } },
          stringData: {
            'tls.crt': '-----BEGIN CERTIFICATE-----\nstand-in\n-----END CERTIFICATE-----\n',
            'tls.key': '-----BEGIN PRIVATE KEY-----\nstand-in\n-----END PRIVATE KEY-----\n',
          },
        },
        'cert-manager-certificates-issuing',
      );
    },
    failNext(fault) {
      faults.push(fault);
    },
    requests,
    stop: async () => {
      await standin.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return standIn;
}

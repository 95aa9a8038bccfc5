/**
 * A tiny HTTP proxy in front of moto that answers chosen requests with an AWS error, worded and shaped as AWS
 * words it (Route 53's REST-XML `ErrorResponse`, ACM's JSON `__type`, EKS's REST-JSON `x-amzn-errortype`), so a test drives the real SDK through its
 * real retry and error paths: throttling then success, 403 AccessDenied, 503.
 *
 *   const proxy = await startFaultProxy(moto.endpoint);
 *   proxy.failNext(2, 'Throttling');      // the next two requests are throttled, the third reaches moto
 *   ... proxy.forwarded, proxy.faulted ...
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { type Moto, type MotoOptions, startMoto, useMotoEnv } from './moto.js';
import { startStandin } from './http-standin.js';

export type AwsFault = 'Throttling' | 'AccessDenied' | 'ServiceUnavailable' | 'InternalError';

export interface FaultProxy {
  endpoint: string;
  /** The next `count` requests (optionally only those whose action matches `action`) get `fault`. */
  failNext(count: number, fault: AwsFault, action?: string): void;
  /** Forgets faults not yet served. */
  clear(): void;
  /** Requests that reached moto, and requests answered with a fault; each as its action name. */
  readonly forwarded: string[];
  readonly faulted: string[];
  stop(): Promise<void>;
}

interface Pending {
  count: number;
  fault: AwsFault;
  action?: string;
}

/** The action a request asks for: ACM's `X-Amz-Target`, or Route 53's REST method and path. */
function actionOf(req: http.IncomingMessage): string {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') return target.split('.').pop() ?? target;
  return `${req.method} ${(req.url ?? '').split('?')[0]}`;
}

/** EKS speaks REST-JSON: the error's code in `x-amzn-errortype`, the body `{"message": …}`. */
const isEks = (req: http.IncomingMessage) => (req.url ?? '').startsWith('/clusters');

function eksFault(fault: AwsFault, action: string): { status: number; code: string; type: string; body: string } {
  const spec = {
    Throttling: { status: 429, code: 'ThrottlingException', message: 'Rate exceeded' },
    AccessDenied: {
      status: 403,
      code: 'AccessDeniedException',
      message: `User: arn:aws:iam::123456789012:user/smarter-worker is not authorized to perform: eks:${action}`,
    },
    ServiceUnavailable: { status: 503, code: 'ServiceUnavailableException', message: 'Service Unavailable' },
    InternalError: { status: 500, code: 'ServerException', message: 'An internal error occurred' },
  }[fault];
  return {
    status: spec.status,
    code: spec.code,
    type: 'application/json',
    body: JSON.stringify({ message: spec.message }),
  };
}

function faultResponse(
  fault: AwsFault,
  json: boolean,
  action: string,
): { status: number; code: string; type: string; body: string } {
  const spec = {
    Throttling: { status: 400, code: json ? 'ThrottlingException' : 'Throttling', message: 'Rate exceeded' },
    AccessDenied: {
      status: json ? 400 : 403,
      code: json ? 'AccessDeniedException' : 'AccessDenied',
      message: `User: arn:aws:iam::123456789012:user/smarter-worker is not authorized to perform: ${json ? 'acm' : 'route53'}:${action} because no identity-based policy allows the action`,
    },
    ServiceUnavailable: {
      status: 503,
      code: json ? 'ServiceUnavailableException' : 'ServiceUnavailable',
      message: 'Service Unavailable',
    },
    InternalError: {
      status: 500,
      code: json ? 'InternalFailure' : 'InternalFailure',
      message: 'An internal error occurred',
    },
  }[fault];
  if (json) {
    return {
      status: spec.status,
      code: spec.code,
      type: 'application/x-amz-json-1.1',
      body: JSON.stringify({ __type: spec.code, message: spec.message }),
    };
  }
  const body =
    '<?xml version="1.0"?>\n' +
    `<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender</Type><Code>${spec.code}</Code>` +
    `<Message>${spec.message}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
  return { status: spec.status, code: spec.code, type: 'text/xml', body };
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const pending: Pending[] = [];
  const forwarded: string[] = [];
  const faulted: string[] = [];
  const standin = await startStandin((req, res) => {
    const action = actionOf(req);
    const json = typeof req.headers['x-amz-target'] === 'string';
    const p = pending.find((x) => x.count > 0 && (x.action === undefined || action.includes(x.action)));
    if (p) {
      p.count--;
      faulted.push(action);
      req.resume();
      const f = isEks(req) ? eksFault(p.fault, action) : faultResponse(p.fault, json, action);
      res.writeHead(f.status, {
        'content-type': f.type,
        'x-amzn-requestid': randomUUID(),
        ...(json || isEks(req) ? { 'x-amzn-errortype': f.code } : {}),
      });
      res.end(f.body);
      return;
    }
    forwarded.push(action);
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on('error', (err) => {
      res.writeHead(502);
      res.end(String(err));
    });
    req.pipe(out);
  });
  return {
    endpoint: standin.origin,
    failNext(count, fault, action) {
      pending.push({ count, fault, ...(action === undefined ? {} : { action }) });
    },
    clear() {
      pending.length = 0;
    },
    forwarded,
    faulted,
    stop: standin.close,
  };
}

/**
 * For a test file: moto on a free port behind a fault proxy, the AWS environment pointed at the proxy for the
 * file's duration, faults cleared after each test. The handles are set once `beforeAll` has run.
 */
export function useMotoBehindFaultProxy(options: MotoOptions = {}): {
  readonly moto: Moto;
  readonly proxy: FaultProxy;
} {
  const handles = {} as { moto: Moto; proxy: FaultProxy };
  let restoreEnv: (() => void) | undefined;
  beforeAll(async () => {
    handles.moto = await startMoto(options);
    handles.proxy = await startFaultProxy(handles.moto.endpoint);
    restoreEnv = useMotoEnv(handles.proxy.endpoint);
  }, 60_000);
  afterAll(async () => {
    restoreEnv?.();
    await handles.proxy?.stop();
    await handles.moto?.stop();
  });
  afterEach(() => handles.proxy?.clear());
  return handles;
}

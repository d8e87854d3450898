/**
 * The Kubernetes API as the connector uses it: a KubeConfig built from the
 * source config (in-cluster service account or a kubeconfig document), typed
 * API clients, and `kubeCall`, which retries 429s honouring `Retry-After` and
 * turns ApiExceptions into ToolErrors the model can read.
 */
import { Agent as HttpsAgent } from 'node:https';
import type * as Kubernetes from '@kubernetes/client-node';
import type { ApiException, AppsV1Api, AuthorizationV1Api, CoreV1Api, KubeConfig, RequestContext, VersionApi } from '@kubernetes/client-node';
import { ToolError, type NetPort } from '../contract.js';
import { retryAfterMs } from '../shared/http-client.js';
import { lazyModule } from '../shared/lazy-module.js';

/** the client library, loaded at the first call to a cluster (shared/lazy-module.ts) */
export const kubernetesLibrary = lazyModule<typeof Kubernetes>('@kubernetes/client-node');

export interface KubernetesConfig {
  readonly auth: { readonly kind: 'in_cluster' } | { readonly kind: 'kubeconfig'; readonly kubeconfig: string; readonly context?: string };
  /** overrides the API server of the cluster (a proxy, a tunnel) */
  readonly base_url?: string;
  /** namespaces a sync reads; default all */
  readonly namespaces?: readonly string[];
}

export interface KubernetesApis {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly version: VersionApi;
  readonly authorization: AuthorizationV1Api;
  /** the API server the calls go to (for messages) */
  readonly server: string;
}

const MAX_RETRIES = 3;
const MAX_RETRY_DELAY_MS = 30_000;

/**
 * A KubeConfig whose requests connect through the egress guard: the API server
 * (and a kubeconfig's proxy-url) are the tenant's to choose. The client builds
 * a TLS agent per request from the kubeconfig; it is swapped for the guard's
 * agent with the same TLS settings (CA, client certificate, SNI). The class is
 * built at first use, when the library is loaded.
 */
let guardedKubeConfig: (new (net: NetPort) => KubeConfig) | null = null;

function guardedKubeConfigClass(): new (net: NetPort) => KubeConfig {
  if (guardedKubeConfig) return guardedKubeConfig;
  class GuardedKubeConfig extends kubernetesLibrary().KubeConfig {
    constructor(private readonly net: NetPort) {
      super();
    }

    override async applySecurityAuthentication(context: RequestContext): Promise<void> {
      await super.applySecurityAuthentication(context);
      if (this.getCurrentCluster()?.proxyUrl) {
        throw new ToolError('invalid_config', 'a kubeconfig proxy-url is not supported: set base_url to reach the cluster through a proxy', {
          field: 'auth.kubeconfig',
        });
      }
      const built = context.getAgent();
      const tls = built instanceof HttpsAgent ? built.options : undefined;
      context.setAgent(this.net.agent(new URL(context.getUrl()).protocol === 'http:' ? 'http:' : 'https:', tls));
    }
  }
  guardedKubeConfig = GuardedKubeConfig;
  return GuardedKubeConfig;
}

const kubeConfig = (net: NetPort | undefined): KubeConfig => (net === undefined ? new (kubernetesLibrary().KubeConfig)() : new (guardedKubeConfigClass())(net));

/**
 * A tenant's kubeconfig may only carry credentials inline. Its `exec` and
 * `auth-provider` entries make the client run commands on this server, and
 * its `*-file` entries make it read this server's files: all are refused,
 * judged on the document as the library parsed it.
 */
function refuseHostReach(kc: KubeConfig): void {
  const refuse = (what: string): never => {
    throw new ToolError(
      'invalid_config',
      `the kubeconfig uses ${what}, which would run a command or read a file on this server: give credentials inline (token, client-certificate-data, client-key-data, certificate-authority-data)`,
      { field: 'auth.kubeconfig' },
    );
  };
  for (const user of kc.users) {
    if (user.exec !== undefined && user.exec !== null) refuse(`an exec credential plugin (user "${user.name}")`);
    if (user.authProvider !== undefined && user.authProvider !== null) refuse(`an auth-provider (user "${user.name}")`);
    if (user.certFile !== undefined) refuse(`client-certificate, a file path (user "${user.name}")`);
    if (user.keyFile !== undefined) refuse(`client-key, a file path (user "${user.name}")`);
    if ((user as { tokenFile?: unknown }).tokenFile !== undefined) refuse(`tokenFile, a file path (user "${user.name}")`);
  }
  for (const cluster of kc.clusters) {
    if (cluster.caFile !== undefined) refuse(`certificate-authority, a file path (cluster "${cluster.name}")`);
  }
}

/** Builds the KubeConfig; throws a ToolError `invalid_config` when the kubeconfig cannot be used. */
function kubeConfigOf(config: KubernetesConfig, net?: NetPort): KubeConfig {
  const kc = kubeConfig(net);
  try {
    if (config.auth.kind === 'in_cluster') kc.loadFromCluster();
    else {
      kc.loadFromString(config.auth.kubeconfig);
      if (config.auth.context !== undefined) kc.setCurrentContext(config.auth.context);
    }
  } catch (error) {
    // the library's own messages name the missing field; a TypeError is it tripping over a document of another shape (`null`, `clusters: [null]`)
    const reason = error instanceof Error && !(error instanceof TypeError) ? error.message : 'it is not a kubeconfig document (clusters, users, contexts)';
    throw new ToolError('invalid_config', `the kubeconfig cannot be read: ${reason}`, { field: 'auth.kubeconfig' });
  }
  if (config.auth.kind === 'kubeconfig') refuseHostReach(kc);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new ToolError('invalid_config', 'the kubeconfig names no current cluster', { field: 'auth.kubeconfig' });
  // loadFromCluster builds `https://undefined:undefined` outside a pod (no KUBERNETES_SERVICE_HOST)
  if (config.auth.kind === 'in_cluster' && config.base_url === undefined && cluster.server.includes('undefined')) {
    throw new ToolError('invalid_config', 'the service does not run inside a Kubernetes pod: use auth.kind `kubeconfig`, or set base_url', {
      field: 'auth.kind',
    });
  }
  if (config.base_url === undefined) return kc;
  // loadFromOptions keeps users and contexts; only the server of the current cluster changes
  const overridden = kubeConfig(net);
  overridden.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: config.base_url!.replace(/\/+$/, '') } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.getCurrentContext(),
  });
  return overridden;
}

export function kubernetesApis(config: Readonly<Record<string, unknown>>, net: NetPort | undefined): KubernetesApis {
  const kc = kubeConfigOf(config as unknown as KubernetesConfig, net);
  const { AppsV1Api, AuthorizationV1Api, CoreV1Api, VersionApi } = kubernetesLibrary();
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    version: kc.makeApiClient(VersionApi),
    authorization: kc.makeApiClient(AuthorizationV1Api),
    server: kc.getCurrentCluster()?.server ?? 'the cluster',
  };
}

const isApiException = (error: unknown): error is ApiException<unknown> =>
  error instanceof Error && typeof (error as { code?: unknown }).code === 'number' && 'headers' in error;

/** The `Status` object a failing API server answers with, when the body carries one. */
function statusOf(body: unknown): { message?: string; reason?: string } {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return { message: body.slice(0, 300) };
    }
  }
  if (typeof value !== 'object' || value === null) return {};
  const status = value as { message?: unknown; reason?: unknown };
  return {
    ...(typeof status.message === 'string' ? { message: status.message } : {}),
    ...(typeof status.reason === 'string' ? { reason: status.reason } : {}),
  };
}

function toolErrorOf(error: unknown, server: string): unknown {
  if (ToolError.is(error) || !(error instanceof Error) || error.name === 'AbortError') return error;
  if (!isApiException(error)) {
    const refused = ToolError.within(error);
    if (refused !== null) return refused;
    // node-fetch keeps only the code of the socket's error: the egress guard's refusal
    if ((error as { code?: unknown }).code === 'egress_refused') return new ToolError('egress_refused', error.message, { server });
    const cause = error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
    if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|fetch failed|request to .* failed/.test(cause)) {
      return new ToolError('upstream_unreachable', `the Kubernetes API server at ${server} cannot be reached: ${cause}`);
    }
    // client-side refusals (TLS settings, a kubeconfig auth plugin failing) are configuration problems
    return new ToolError('invalid_config', `the Kubernetes client cannot call ${server}: ${cause}`);
  }
  const status = statusOf(error.body);
  const details = { status: error.code, ...status };
  switch (error.code) {
    case 400:
      return new ToolError('bad_request', `the Kubernetes API server refused the request (400): ${status.message ?? 'bad request'}`, details);
    case 401:
      return new ToolError('unauthorized', 'the Kubernetes API server refused the credentials (401)', details);
    case 403:
      return new ToolError('forbidden', `the credentials lack a permission (403): ${status.message ?? 'forbidden'}`, details);
    case 404:
      return new ToolError('not_found', `no such Kubernetes object (404): ${status.message ?? 'not found'}`, details);
    case 409:
      return new ToolError('conflict', `the object changed meanwhile (409): ${status.message ?? 'conflict'}`, details);
    case 429:
      return new ToolError('rate_limited_upstream', 'the Kubernetes API server is throttling these requests; try again later', details);
    default:
      return new ToolError('upstream_error', `the Kubernetes API server answered ${error.code}: ${status.message ?? error.message}`, details);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settles with the call, or rejects as soon as the signal aborts (the generated client takes no signal). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * One API call with retries of 429 (API priority and fairness answers them
 * with `Retry-After`), errors mapped to ToolErrors.
 */
export async function kubeCall<T>(apis: Pick<KubernetesApis, 'server'>, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    signal.throwIfAborted();
    try {
      return await abortable(call(), signal);
    } catch (error) {
      signal.throwIfAborted();
      if (isApiException(error) && error.code === 429 && attempt < MAX_RETRIES) {
        const wait = retryAfterMs(new Headers(error.headers)) ?? 1000 * 2 ** attempt;
        if (wait <= MAX_RETRY_DELAY_MS) {
          await sleep(wait, signal);
          continue;
        }
      }
      throw toolErrorOf(error, apis.server);
    }
  }
}

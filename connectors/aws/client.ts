/**
 * The AWS SDK v3 clients as the connector builds them: always with the
 * source's own credentials (static keys, or a role assumed with them), never
 * the SDK's default provider chain, which would hand a tenant this server's
 * own AWS identity (env, ~/.aws, instance metadata). Every request goes out
 * through the egress guard's agents. `awsCall` maps SDK failures to
 * ToolErrors the model can read.
 */
import { createHash } from 'node:crypto';
import { ToolError, type NetPort } from '../contract.js';
import { awsConfigOf, type AwsConfig } from './config.js';
import { stsSdk } from './sdk.js';

interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}

/** What every SDK client is built with; each field set so nothing is read from this host's AWS configuration. */
interface BaseClientConfig {
  readonly region: string;
  readonly credentials: AwsCredentials;
  readonly credentialDefaultProvider: () => () => Promise<never>;
  readonly endpoint?: string;
  readonly maxAttempts: number;
  readonly retryMode: string;
  readonly useFipsEndpoint: boolean;
  readonly useDualstackEndpoint: boolean;
  readonly requestHandler: Record<string, unknown>;
}

export interface AwsSession {
  readonly config: AwsConfig;
  /** a client of one service in one region: `session.client(EC2Client, 'eu-west-1')` */
  client<C>(Client: new (config: BaseClientConfig) => C, region: string): C;
}

const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;
const ROLE_SESSION_NAME = 'agent-context-service';
/** assumed-role credentials are reused until this close to their expiry */
const REFRESH_MARGIN_MS = 5 * 60_000;
const MAX_CACHED_ROLES = 500;
const assumed = new Map<string, AwsCredentials>();

/** a guard against the SDK ever falling back to the default chain (it only does when `credentials` is missing) */
const noDefaultCredentials = () => () => Promise.reject(new ToolError('invalid_config', 'the aws source has no credentials'));

function baseConfig(config: AwsConfig, region: string, credentials: AwsCredentials, net: NetPort | undefined): BaseClientConfig {
  const timeouts = { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS };
  return {
    region,
    credentials,
    credentialDefaultProvider: noDefaultCredentials,
    ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
    maxAttempts: 3,
    retryMode: 'standard',
    useFipsEndpoint: false,
    useDualstackEndpoint: false,
    // the SDK builds its NodeHttpHandler from these options; never destroyed, since the guard's agents are shared
    requestHandler: net === undefined ? timeouts : { ...timeouts, httpAgent: net.agent('http:'), httpsAgent: net.agent('https:') },
  };
}

const staticCredentials = (config: AwsConfig): AwsCredentials => ({
  accessKeyId: config.accessKeyId,
  secretAccessKey: config.secretAccessKey,
  ...(config.sessionToken === undefined ? {} : { sessionToken: config.sessionToken }),
});

/** The role's temporary credentials, from the cache while they last (keyed by everything that identifies the grant). */
async function assumeRole(config: AwsConfig, roleArn: string, net: NetPort | undefined, signal: AbortSignal): Promise<AwsCredentials> {
  const key = createHash('sha256')
    .update(JSON.stringify([config.accessKeyId, config.secretAccessKey, config.sessionToken, roleArn, config.externalId, config.endpoint]))
    .digest('hex');
  const cached = assumed.get(key);
  // wall clock: STS expirations are real time
  if (cached?.expiration !== undefined && cached.expiration.getTime() - REFRESH_MARGIN_MS > Date.now()) return cached;
  const sts = new (stsSdk().STSClient)(baseConfig(config, config.regions[0] ?? 'us-east-1', staticCredentials(config), net));
  const answer = await awsCall('STS', signal, (options) =>
    sts.send(
      new (stsSdk().AssumeRoleCommand)({ RoleArn: roleArn, RoleSessionName: ROLE_SESSION_NAME, ExternalId: config.externalId, DurationSeconds: 3600 }),
      options,
    ),
  );
  const granted = answer.Credentials;
  if (granted?.AccessKeyId === undefined || granted.SecretAccessKey === undefined) {
    throw new ToolError('upstream_error', `STS AssumeRole of ${roleArn} answered without credentials`);
  }
  const credentials: AwsCredentials = {
    accessKeyId: granted.AccessKeyId,
    secretAccessKey: granted.SecretAccessKey,
    ...(granted.SessionToken === undefined ? {} : { sessionToken: granted.SessionToken }),
    // wall clock: STS expirations are real time
    expiration: granted.Expiration ?? new Date(Date.now() + 15 * 60_000),
  };
  if (assumed.size >= MAX_CACHED_ROLES) assumed.delete(assumed.keys().next().value as string);
  assumed.set(key, credentials);
  return credentials;
}

/** The credentials and client factory of one source; assumes its role first when it names one. */
export async function awsSession(rawConfig: Readonly<Record<string, unknown>>, net: NetPort | undefined, signal: AbortSignal): Promise<AwsSession> {
  const config = awsConfigOf(rawConfig);
  if (config.accessKeyId === '' || config.secretAccessKey === '')
    throw new ToolError('invalid_config', 'the aws source needs access_key_id and secret_access_key');
  const credentials = config.roleArn === undefined ? staticCredentials(config) : await assumeRole(config, config.roleArn, net, signal);
  return { config, client: (Client, region) => new Client(baseConfig(config, region, credentials, net)) };
}

const UNAUTHORIZED = new Set([
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'SignatureDoesNotMatch',
  'InvalidSignatureException',
  'AuthFailure',
  'ExpiredToken',
  'ExpiredTokenException',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'InvalidAccessKeyId',
]);
const FORBIDDEN = new Set(['AccessDenied', 'AccessDeniedException', 'UnauthorizedOperation', 'UnauthorizedException']);
const THROTTLED = new Set(['Throttling', 'ThrottlingException', 'RequestLimitExceeded', 'TooManyRequestsException', 'RequestThrottled']);
const NETWORK = /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|EAI_AGAIN|socket hang up|TimeoutError/;

interface SdkServiceError extends Error {
  readonly $metadata?: { httpStatusCode?: number; requestId?: string };
  readonly $fault?: 'client' | 'server';
}

const isServiceError = (error: unknown): error is SdkServiceError =>
  error instanceof Error && typeof (error as SdkServiceError).$fault === 'string' && (error as SdkServiceError).$metadata?.httpStatusCode !== undefined;

/** An SDK failure as the ToolError the model reads; anything else is returned as it is. */
function toolErrorOf(error: unknown, service: string): unknown {
  const own = ToolError.within(error);
  if (own !== null) return own;
  if (!(error instanceof Error) || error.name === 'AbortError') return error;
  if (!isServiceError(error)) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (NETWORK.test(`${code} ${error.name} ${error.message}`))
      return new ToolError('upstream_unreachable', `AWS ${service} cannot be reached: ${error.message}`, { service });
    return error;
  }
  const status = error.$metadata?.httpStatusCode ?? 0;
  const details = { service, aws_code: error.name, status, ...(error.$metadata?.requestId ? { request_id: error.$metadata.requestId } : {}) };
  const said = error.message || error.name;
  if (UNAUTHORIZED.has(error.name)) return new ToolError('unauthorized', `AWS ${service} refused the credentials (${error.name}): ${said}`, details);
  if (FORBIDDEN.has(error.name)) return new ToolError('forbidden', `the credentials lack a permission for AWS ${service} (${error.name}): ${said}`, details);
  if (THROTTLED.has(error.name) || status === 429)
    return new ToolError('rate_limited_upstream', `AWS ${service} is throttling these requests; try again later`, details);
  if (/NotFound/.test(error.name)) return new ToolError('not_found', `AWS ${service}: ${said}`, details);
  if (error.$fault === 'client') return new ToolError('bad_request', `AWS ${service} refused the request (${error.name}): ${said}`, details);
  return new ToolError('upstream_error', `AWS ${service} failed (${status} ${error.name}): ${said}`, details);
}

/** One SDK call with the signal passed through and failures mapped (the SDK retries throttling and 5xx itself). */
export async function awsCall<T>(service: string, signal: AbortSignal, call: (options: { abortSignal: AbortSignal }) => Promise<T>): Promise<T> {
  signal.throwIfAborted();
  try {
    return await call({ abortSignal: signal });
  } catch (error) {
    signal.throwIfAborted();
    throw toolErrorOf(error, service);
  }
}

/** Reads pages until `limit` items or the last page; `truncated` says more were there. */
export async function readPages<T>(
  limit: number,
  page: (token: string | undefined) => Promise<{ items: readonly T[]; next?: string | undefined }>,
): Promise<{ items: T[]; truncated: boolean }> {
  const items: T[] = [];
  let token: string | undefined;
  do {
    const answer = await page(token);
    items.push(...answer.items);
    token = answer.next || undefined;
  } while (token !== undefined && items.length < limit);
  return { items: items.slice(0, limit), truncated: token !== undefined || items.length > limit };
}

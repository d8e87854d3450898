/**
 * The config of a SQL database source (`postgres`, `mysql`): discrete fields
 * or a connection URL. The URL is `writeOnly` as a whole (it may carry the
 * password, and the sources resource masks writeOnly fields on read and
 * asks for them again when an endpoint field changes); fields given beside
 * it override its parts, so a URL without a password plus a `password`
 * field works too.
 */
import { isIP } from 'node:net';
import { ToolError, type JsonSchema } from '../../contract.js';

type TlsMode = 'disable' | 'require' | 'verify-full';

/** Where and how to connect, with the limits every query runs under. */
export interface SqlConnection {
  readonly host: string;
  readonly port: number;
  readonly database: string | null;
  readonly user: string;
  readonly password: string | null;
  readonly tls: TlsMode;
  /** PEM CA bundle trusted for `verify-full` (default: the system's) */
  readonly ca: string | null;
  readonly statementTimeoutMs: number;
  readonly rowLimit: number;
}

export interface SqlDialect {
  /** `postgres` / `mysql`: the URL schemes accepted (the first is the canonical one) */
  readonly schemes: readonly string[];
  readonly defaultPort: number;
  /** e.g. `postgres://reader:secret@db.internal:5432/orders?sslmode=require` */
  readonly urlExample: string;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
const DEFAULT_ROW_LIMIT = 500;
const MAX_ROW_LIMIT = 10_000;

export function sqlConfigSchema(dialect: SqlDialect): JsonSchema {
  return {
    type: 'object',
    properties: {
      url: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
        writeOnly: true,
        description: `a connection URL, e.g. \`${dialect.urlExample}\` (write-only as a whole: it may hold the password); fields given beside it override its parts`,
      },
      host: { type: 'string', minLength: 1, maxLength: 253, description: 'the server host name or IP address' },
      port: { type: 'integer', minimum: 1, maximum: 65535, description: `default ${dialect.defaultPort}` },
      database: { type: 'string', minLength: 1, maxLength: 128 },
      user: {
        type: 'string',
        minLength: 1,
        maxLength: 128,
        description: 'a read-only role is best; the connector also runs every statement in a read-only transaction',
      },
      password: { type: 'string', maxLength: 1000, writeOnly: true },
      tls: {
        enum: ['disable', 'require', 'verify-full'],
        description:
          "`require`: encrypted, certificate not checked; `verify-full`: encrypted, certificate and host name checked (default `require`, or the URL's sslmode)",
      },
      ca_certificate: {
        type: 'string',
        minLength: 1,
        maxLength: 100_000,
        description: 'PEM CA certificate(s) trusted for `verify-full` (default: the system CAs)',
      },
      statement_timeout_ms: {
        type: 'integer',
        minimum: 100,
        maximum: 600_000,
        default: DEFAULT_STATEMENT_TIMEOUT_MS,
        description: 'every statement is cancelled by the server after this long',
      },
      row_limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_ROW_LIMIT,
        default: DEFAULT_ROW_LIMIT,
        description: 'at most this many rows come back from `query` (the answer says `truncated`)',
      },
    },
    anyOf: [{ required: ['url'] }, { required: ['host', 'user'] }],
    additionalProperties: false,
  };
}

const invalid = (message: string, field: string): ToolError => new ToolError('invalid_config', message, { field });

/** libpq's sslmode and MySQL's ssl-mode, read as one of ours (the weak `allow`/`prefer` become `require`) */
function tlsOfUrl(url: URL): TlsMode | null {
  const mode = (url.searchParams.get('sslmode') ?? url.searchParams.get('ssl-mode') ?? url.searchParams.get('ssl_mode'))?.toLowerCase().replace(/_/g, '-');
  if (mode === undefined) return url.searchParams.get('ssl') === 'true' ? 'require' : null;
  if (mode === 'disable' || mode === 'disabled') return 'disable';
  if (mode === 'verify-full' || mode === 'verify-ca' || mode === 'verify-identity') return 'verify-full';
  return 'require';
}

function partsOfUrl(text: string, dialect: SqlDialect): Partial<Record<'host' | 'port' | 'database' | 'user' | 'password', string>> & { tls?: TlsMode } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`url is not a URL (expected e.g. ${dialect.urlExample.replace(/:[^:@/]+@/, ':…@')})`, 'url');
  }
  const scheme = url.protocol.slice(0, -1);
  if (!dialect.schemes.includes(scheme)) throw invalid(`url must start with ${dialect.schemes.map((s) => `${s}://`).join(' or ')}, not ${scheme}://`, 'url');
  const decode = (value: string): string | undefined => (value === '' ? undefined : decodeURIComponent(value));
  const tls = tlsOfUrl(url);
  const parts = {
    host: decode(url.hostname.replace(/^\[|\]$/g, '')),
    port: decode(url.port),
    database: decode(url.pathname.replace(/^\//, '')),
    user: decode(url.username),
    password: decode(url.password),
  };
  return { ...Object.fromEntries(Object.entries(parts).filter(([, value]) => value !== undefined)), ...(tls === null ? {} : { tls }) };
}

/** The connection a source config describes (validated against sqlConfigSchema, defaults filled). */
export function connectionOf(config: Readonly<Record<string, unknown>>, dialect: SqlDialect): SqlConnection {
  const field = (name: string): string | undefined => (typeof config[name] === 'string' ? config[name] : undefined);
  const url = field('url');
  const fromUrl = url === undefined ? {} : partsOfUrl(url, dialect);
  const host = field('host') ?? fromUrl.host;
  const user = field('user') ?? fromUrl.user;
  if (host === undefined) throw invalid('no host: give `host` or a url with one', 'host');
  if (user === undefined) throw invalid('no user: give `user` or a url with one', 'user');
  const port = typeof config['port'] === 'number' ? config['port'] : fromUrl.port === undefined ? dialect.defaultPort : Number(fromUrl.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw invalid(`port ${String(port)} is not a TCP port`, 'port');
  return {
    host,
    port,
    database: field('database') ?? fromUrl.database ?? null,
    user,
    password: field('password') ?? fromUrl.password ?? null,
    tls: (field('tls') as TlsMode | undefined) ?? fromUrl.tls ?? 'require',
    ca: field('ca_certificate') ?? null,
    statementTimeoutMs: typeof config['statement_timeout_ms'] === 'number' ? config['statement_timeout_ms'] : DEFAULT_STATEMENT_TIMEOUT_MS,
    rowLimit: typeof config['row_limit'] === 'number' ? config['row_limit'] : DEFAULT_ROW_LIMIT,
  };
}

/** what a pool was built from: a changed config (or a moved address) means a new pool */
export const fingerprintOf = (connection: SqlConnection, address: string): string => JSON.stringify([connection, address]);

/** TLS options for Node's tls.connect: `servername` is the name asked for (never an IP, RFC 6066) so the certificate is checked against it */
export function tlsOptionsOf(connection: SqlConnection): { rejectUnauthorized: boolean; servername?: string; ca?: string } | null {
  if (connection.tls === 'disable') return null;
  return {
    rejectUnauthorized: connection.tls === 'verify-full',
    ...(isIP(connection.host) !== 0 ? {} : { servername: connection.host }),
    ...(connection.ca === null ? {} : { ca: connection.ca }),
  };
}

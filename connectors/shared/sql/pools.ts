/**
 * The connection pools of one SQL connector, one per source (at most
 * POOL_MAX connections each). A pool is pinned to the address the egress
 * guard checked: when the source's config or its host's address changes the
 * old pool is closed and a new one opened. The plugin closes a source's pool
 * when the source is deleted or changed (`releaseSource`) and all of them at
 * shutdown (`close`).
 */
import type { NetPort } from '../../contract.js';
import { ToolError } from '../../contract.js';
import { fingerprintOf, type SqlConnection } from './config.js';

export const POOL_MAX = 4;
/** idle connections are closed after this long, so a quiet source holds none */
export const POOL_IDLE_MS = 30_000;
export const CONNECT_TIMEOUT_MS = 10_000;

export interface ClosablePool {
  end(): Promise<void>;
}

/**
 * The address to open sockets to: resolved and judged by the egress guard
 * (without one, when a plugin is driven directly, the name itself).
 */
export async function pinnedAddress(host: string, net: NetPort | undefined): Promise<string> {
  if (net === undefined) return host;
  try {
    return await net.resolve(host);
  } catch (error) {
    if (ToolError.within(error) !== null) throw ToolError.within(error)!;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolError('upstream_unreachable', `the database host ${host} does not resolve: ${reason}`, { host });
  }
}

export class SourcePools<P extends ClosablePool> {
  private readonly pools = new Map<string, { readonly fingerprint: string; readonly pool: P }>();

  constructor(private readonly open: (connection: SqlConnection, address: string) => P) {}

  /** the source's pool for this connection and address (a different one replaces, and closes, the old) */
  get(sourceId: string, connection: SqlConnection, address: string): P {
    const fingerprint = fingerprintOf(connection, address);
    const current = this.pools.get(sourceId);
    if (current?.fingerprint === fingerprint) return current.pool;
    if (current) void current.pool.end().catch(() => undefined);
    const pool = this.open(connection, address);
    this.pools.set(sourceId, { fingerprint, pool });
    return pool;
  }

  async release(sourceId: string): Promise<void> {
    const current = this.pools.get(sourceId);
    this.pools.delete(sourceId);
    await current?.pool.end();
  }

  async closeAll(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.allSettled(all.map((entry) => entry.pool.end()));
  }

  get size(): number {
    return this.pools.size;
  }
}

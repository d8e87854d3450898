/** A SQL connector plugin from its engine: the shared config schema, validation, tools and sync, and the pool lifecycle hooks. */
import type { ConnectorPlugin } from '../../contract.js';
import { sqlConfigSchema, type SqlDialect } from './config.js';
import type { SqlEngine } from './engine.js';
import { sqlSync } from './sync.js';
import { sqlTools } from './tools.js';
import { sqlValidate } from './validate.js';

export function sqlPlugin(engine: SqlEngine, dialect: SqlDialect, description: string): ConnectorPlugin {
  return {
    kind: engine.kind,
    version: '1.0.0',
    contract: '^1',
    description,
    configSchema: sqlConfigSchema(dialect),
    validate: sqlValidate(engine),
    tools: sqlTools(engine),
    sync: sqlSync(engine),
    releaseSource: (sourceId) => engine.release(sourceId),
    close: () => engine.close(),
  };
}

/** Settles with the work, or rejects as soon as the signal aborts (the caller then drops the connection rather than reusing it). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

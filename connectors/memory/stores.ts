import type { Collections } from '../../domains/collections.js';

/** The metadata collections the memory tools use (built-ins may use our stores; third-party plugins only get ToolContext). */
export type MemoryPluginStores = Pick<Collections, 'memory' | 'realms'>;


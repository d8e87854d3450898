import type { Collections } from '../../runtime/collections.js';

/** The metadata collections the memory tools use (built-ins may use our stores; third-party plugins only get ToolContext). */
export type MemoryPluginStores = Pick<Collections, 'memory' | 'realms'>;

export const MEMORY_KINDS = ['fact', 'guideline', 'preference', 'note'] as const;
/** the same limit as `POST /memory` */
export const MAX_MEMORY_TEXT_BYTES = 32 * 1024;
export const MAX_RECALL_LIMIT = 50;

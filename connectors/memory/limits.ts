/**
 * The memory tools' bounds, as the REST routes have them (`POST /memory`,
 * `POST /memory/recall`); test/connectors/memory-plugin.test.ts keeps them equal.
 */

/** the most entries one recall answers */
export const MAX_RECALL_LIMIT = 50;

/** the largest memory text, in bytes of UTF-8 */
export const MAX_MEMORY_TEXT_BYTES = 32 * 1024;

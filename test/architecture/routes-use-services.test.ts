/**
 * Issue 16's layout rule, read from the files: a route module parses, calls a
 * domain service and presents; it never reaches the metadata store. So no
 * route module names `collections` (the store's handle on `Services`, the
 * store's module `runtime/collections.ts`, or `domains/collections.ts`):
 * "where is the logic of X" has one answer, its folder in `domains/`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROUTES = fileURLToPath(new URL('../../gateway/routes', import.meta.url));
function offenders(): string[] {
  const found: string[] = [];
  for (const file of readdirSync(ROUTES)
    .filter((name) => name.endsWith('.ts'))
    .sort()) {
    readFileSync(join(ROUTES, file), 'utf8')
      .split('\n')
      .forEach((line, index) => {
        // the store's handle (`collections.x`, `{ collections }`) or its modules; RAG's own "collections" (`/rag/collections`) are a resource name
        if (/\bcollections\s*[.,}]|\{[^}]*\bcollections\b|collections\.js/.test(line)) found.push(`gateway/routes/${file}:${index + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('route modules use domain services', () => {
  it('no route module references collections', () => {
    expect(offenders()).toEqual([]);
  });
});

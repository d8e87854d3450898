/** cli/provision/KINDS.md is what `provision docs` generates from the kinds' schemas: a schema change without the docs fails here. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { kindsMarkdown } from '../../cli/provision/docs.js';
import { PROJECT_ROOT } from './run-cli.js';

it('KINDS.md matches the schemas (regenerate: service-proxy-cli provision docs > cli/provision/KINDS.md)', () => {
  expect(readFileSync(join(PROJECT_ROOT, 'cli', 'provision', 'KINDS.md'), 'utf8').trimEnd()).toBe(kindsMarkdown().trimEnd());
});

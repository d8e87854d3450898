/**
 * A package loaded on first use instead of at start. The cloud SDKs of some
 * built-ins (`@kubernetes/client-node` ~70 MB of resident memory, the AWS SDK
 * clients ~90 MB) would otherwise sit in every server process, used or not
 * (issue 20: they were most of the idle RSS the ingest bench counts). Loaded
 * synchronously with `require` (Node loads an ES module package that way too),
 * so the functions that use them keep their signatures; types come from
 * `import type`, which costs nothing at run time.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export function lazyModule<T>(name: string): () => T {
  let loaded: T | undefined;
  return () => (loaded ??= load(name) as T);
}

/**
 * A suite's shared setup in one call: `useSuite(start)` registers the
 * beforeAll that runs `start` and the afterAll that stops what it started, and
 * returns the context object whose fields the tests read (filled in beforeAll).
 * `own(thing)` registers one started thing for afterAll (its `stop` or `close`,
 * or the given function); the last started stops first, so a server goes
 * before the fakes it talks to. `useServer`, `useOneOrg`, `useTwoOrgs`,
 * `useLlmServer` and `useWiredOrg` are the common starts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startFakeLlmServer, type FakeLlmServer } from '../fakes/llm/server.js';
import { stopLlmServer, type LlmServer } from './llm.js';
import { oneOrg, twoOrgs, type OneOrg, type TwoOrgs } from './orgs.js';
import type { TestServer, TestServerOptions } from './server.js';

type Closable = { stop(): unknown } | { close(): unknown };

export type Own = <T>(thing: T, stop?: (thing: T) => unknown) => T;

export function useSuite<T extends object>(start: (own: Own) => Promise<T>, timeout?: number): T {
  const context = {} as T;
  const stops: (() => unknown)[] = [];
  const own: Own = (thing, stop) => {
    const closable = thing as Closable;
    stops.push(stop ? () => stop(thing) : 'stop' in closable ? () => closable.stop() : () => closable.close());
    return thing;
  };
  beforeAll(async () => {
    Object.assign(context, await start(own));
  }, timeout);
  afterAll(async () => {
    const failures: unknown[] = [];
    for (const stop of stops.reverse())
      await Promise.resolve()
        .then(stop)
        .catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw failures[0];
  });
  return context;
}

type Env = Record<string, string>;

export const ownOrgs = <T extends { server: TestServer }>(own: Own, started: T): T => own(started, (it) => it.server.stop());

export const useOneOrg = (env: Env = {}, options: Parameters<typeof oneOrg>[1] = {}): OneOrg =>
  useSuite(async (own) => ownOrgs(own, await oneOrg(env, options)));

export const useTwoOrgs = (env: Env = {}, options: TestServerOptions = {}): TwoOrgs => useSuite(async (own) => ownOrgs(own, await twoOrgs(env, options)));

export const ownLlm = <T extends LlmServer>(own: Own, started: T): T => own(started, stopLlmServer);

/** a fresh temporary directory, removed in afterAll */
export const ownTempDir = (own: Own, prefix: string): string =>
  own(mkdtempSync(join(tmpdir(), prefix)), (dir) => rmSync(dir, { recursive: true, force: true }));

/** a fresh fake LLM for the suite, for the ones that start their servers themselves */
export const useFakeLlm = (): { llm: FakeLlmServer } => useSuite(async (own) => ({ llm: own(await startFakeLlmServer()) }));

/** a plugins.json naming `plugins` (for PLUGINS_FILE), in a temporary directory removed in afterAll */
export const ownPluginsFile = (own: Own, plugins: readonly string[]): string => {
  const file = join(ownTempDir(own, 'plugins-'), 'plugins.json');
  writeFileSync(file, JSON.stringify({ plugins }));
  return file;
};

/**
 * The state file: what the engine created, by address, with every attribute
 * (sensitive ones included, as Terraform keeps them) and the id that ties it
 * to the server. Written 0600 through a temporary file and a rename, so a
 * crash leaves the old or the new state, never half of one. A lock file
 * (created exclusively, holding the pid) keeps two applies apart; a lock
 * whose process is gone is taken over.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { CliError, usage } from '../errors.js';
import type { Attributes, Value } from './schema.js';

export interface ResourceState {
  readonly kind: string;
  readonly id: string;
  readonly attributes: Attributes;
  /** the addresses its configuration referred to when applied: deletes go dependents first */
  readonly dependencies?: readonly string[];
}

export interface StateDocument {
  readonly version: 1;
  /** increases on every write */
  serial: number;
  /** one per state file: a state copied over another is noticed */
  readonly lineage: string;
  /** the API root the objects live on */
  api_url: string;
  resources: Record<string, ResourceState>;
  /** the output blocks' values after the last apply (sensitive ones included, flagged) */
  outputs?: Record<string, { readonly value: Value; readonly sensitive: boolean }>;
  /** old objects a create-before-destroy replacement still has to delete (kept until deleted, so a failed apply retries them) */
  deposed?: (ResourceState & { readonly address: string })[];
}

/** `apiUrl`: the API the caller works on (a state of another one is refused); null when only reading the file (`state list|show`) */
export function readState(path: string, apiUrl: string | null): StateDocument {
  if (!existsSync(path)) return { version: 1, serial: 0, lineage: randomUUID(), api_url: apiUrl ?? '', resources: {} };
  let document: StateDocument;
  try {
    document = JSON.parse(readFileSync(path, 'utf8')) as StateDocument;
  } catch (error) {
    throw usage(`state file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (document.version !== 1 || typeof document.resources !== 'object') throw usage(`state file ${path} is not a state file of this client`);
  if (apiUrl !== null && document.api_url !== apiUrl && Object.keys(document.resources).length > 0) {
    throw usage(`state file ${path} belongs to ${document.api_url}, not ${apiUrl}: use another --state file`);
  }
  return document;
}

export function writeState(path: string, document: StateDocument): void {
  document.serial += 1;
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(document, null, 2) + '\n', { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Takes the state's lock; the returned function releases it. */
export function lockState(path: string): () => void {
  const lock = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(lock, 'wx', 0o600);
      writeFileSync(fd, JSON.stringify({ pid: process.pid, created_at: new Date().toISOString() }));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder: { pid?: number; created_at?: string } = {};
      try {
        holder = JSON.parse(readFileSync(lock, 'utf8')) as typeof holder;
      } catch {
        // a lock being written right now: treat as held
      }
      if (typeof holder.pid === 'number' && !alive(holder.pid)) {
        rmSync(lock, { force: true });
        continue;
      }
      throw new CliError(
        'api_error',
        `state ${path} is locked by process ${holder.pid ?? '?'} since ${holder.created_at ?? '?'} (remove ${lock} if that process is gone)`,
      );
    }
  }
  throw new CliError('api_error', `cannot lock state ${path}`);
}

/**
 * Files under DATA_DIR are the owner's alone: 0600 files, 0700 folders. The
 * process umask covers what the engines create themselves (SQLite, DuckDB and
 * Kùzu files, WAL and journals); our own writes also pass explicit modes, and
 * engine files left by an earlier release are tightened when they are opened.
 */
import { chmodSync, existsSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** group and others get nothing from files this process creates from now on */
export function restrictUmask(): void {
  // a worker thread may not set the umask (it is the process's): the main thread does
  if (isMainThread) process.umask(0o077);
}

/** 0600 on each of `paths` that exists (a database and its side files). */
export function tightenFiles(paths: readonly string[]): void {
  for (const path of paths) if (existsSync(path)) chmodSync(path, PRIVATE_FILE_MODE);
}

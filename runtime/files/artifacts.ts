/**
 * Run artifacts: the files an agent run produced (`files.write_artifact`),
 * kept in the organization's file store under `artifacts/<run id>/`, so the
 * `/files` routes list and download them like any other file.
 */
import { ServiceError } from '../errors.js';
import type { OrgId } from '../store/types.js';
import { normalizeRemotePath } from './paths.js';
import type { FileInfo, FileStore } from './store.js';

/** the top-level folder of every run's artifacts */
export const ARTIFACTS_FOLDER = 'artifacts';

/** `artifacts/<run id>`: where one run's files live. */
export const artifactsFolder = (runId: string): string => `${ARTIFACTS_FOLDER}/${runId}`;

/** whether a normalized file-store path is the artifacts folder or inside it */
export const isArtifactPath = (path: string): boolean => path === ARTIFACTS_FOLDER || path.startsWith(`${ARTIFACTS_FOLDER}/`);

/**
 * The stored path of an artifact named `relative` (`charts/q1.png`) by the
 * run. Thrown (ServiceError `validation_error`) when `relative` is empty,
 * climbs out with `..`, or holds a backslash or NUL; a leading `/` is not
 * allowed either, so the name always reads as relative to the run's folder.
 */
export function artifactPath(runId: string, relative: string): string {
  if (relative.startsWith('/')) {
    throw new ServiceError('validation_error', `invalid file path "${relative}": give a path relative to the run's folder, without a leading "/"`, { field: 'path' });
  }
  return `${artifactsFolder(runId)}/${normalizeRemotePath(relative)}`;
}

/** The run's artifacts, by path; one walk of its folder (none yet: empty). */
export async function listArtifacts(files: FileStore, org: OrgId, runId: string): Promise<FileInfo[]> {
  const found = await files.list(org, artifactsFolder(runId));
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

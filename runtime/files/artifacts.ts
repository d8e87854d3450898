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

/**
 * A path segment as the most lenient file system would read it: percent-decoded
 * (a client or proxy may decode once more), NFKC (fullwidth and other
 * compatibility forms), without default-ignorable code points (zero-width
 * characters HFS+ skips), case-folded (NTFS, APFS and HFS+ are
 * case-insensitive by default) and without trailing dots and spaces (Windows
 * drops them).
 */
function foldSegment(segment: string): string {
  let text = segment;
  for (let round = 0; round < 3 && text.includes('%'); round++) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(text);
    } catch {
      break;
    }
    if (decoded === text) break;
    text = decoded;
  }
  // a decoded separator starts a new segment for whoever decoded it
  const first = text.split(/[\\/]/, 1)[0] ?? '';
  return first.normalize('NFKC').replace(/\p{Default_Ignorable_Code_Point}/gu, '').toLowerCase().replace(/[. ]+$/, '');
}

/**
 * Whether a normalized file-store path is the artifacts folder or inside it.
 * The first segment is compared folded (foldSegment): the store may sit on a
 * case-insensitive file system, where `Artifacts/x` is the same folder, so
 * every spelling that could reach the reserved folder on some file system
 * counts as it.
 */
export const isArtifactPath = (path: string): boolean => foldSegment(path.split('/', 1)[0] ?? '') === ARTIFACTS_FOLDER;

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

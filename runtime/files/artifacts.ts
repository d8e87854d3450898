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
const artifactsFolder = (runId: string): string => `${ARTIFACTS_FOLDER}/${runId}`;

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
  return first
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .toLowerCase()
    .replace(/[. ]+$/, '');
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
    throw new ServiceError('validation_error', `invalid file path "${relative}": give a path relative to the run's folder, without a leading "/"`, {
      field: 'path',
    });
  }
  return `${artifactsFolder(runId)}/${normalizeRemotePath(relative)}`;
}

/** The run's artifacts, by path; one walk of its folder (none yet: empty). */
export async function listArtifacts(files: FileStore, org: OrgId, runId: string): Promise<FileInfo[]> {
  const found = await files.list(org, artifactsFolder(runId));
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** a run's id as the runtime draws it (`run_<ulid>`): anything else never names an artifacts folder */
const RUN_ID = /^run_[0-9a-z]{1,64}$/;
const ARTIFACT_ID_PREFIX = 'art_';

/** One stored artifact: which run wrote it and its name inside the run's folder. */
export interface ArtifactRef {
  readonly runId: string;
  /** the path inside the run's folder (`charts/q1.png`) */
  readonly name: string;
  /** the file-store path, `artifacts/<run id>/<name>` */
  readonly path: string;
}

/**
 * The id of an artifact: `art_` + base64url of `<run id>/<name>`. Opaque to
 * clients, yet derived (no index to keep) and free of slashes, so it is one
 * URL segment.
 */
export const artifactId = (ref: Pick<ArtifactRef, 'runId' | 'name'>): string =>
  ARTIFACT_ID_PREFIX + Buffer.from(`${ref.runId}/${ref.name}`, 'utf8').toString('base64url');

/** The artifact an id names, or null when it is not one we issue (bad encoding, no run id, a name that climbs out). */
export function parseArtifactId(id: string): ArtifactRef | null {
  if (!id.startsWith(ARTIFACT_ID_PREFIX)) return null;
  const encoded = id.slice(ARTIFACT_ID_PREFIX.length);
  if (!/^[A-Za-z0-9_-]+$/.test(encoded)) return null;
  const decoded = Buffer.from(encoded, 'base64url').toString('utf8');
  const slash = decoded.indexOf('/');
  if (slash < 0) return null;
  const runId = decoded.slice(0, slash);
  const name = decoded.slice(slash + 1);
  if (!RUN_ID.test(runId)) return null;
  let normalized: string;
  try {
    normalized = normalizeRemotePath(name);
  } catch {
    return null;
  }
  // one spelling per artifact: `a//b` or `./a` would be a second id for the same file
  if (normalized !== name) return null;
  return { runId, name, path: artifactPath(runId, name) };
}

/** The artifact a listed file-store path is, or null for a path outside any run's folder. */
function artifactOfPath(path: string): ArtifactRef | null {
  const prefix = `${ARTIFACTS_FOLDER}/`;
  if (!path.startsWith(prefix)) return null;
  const rest = path.slice(prefix.length);
  const slash = rest.indexOf('/');
  if (slash < 0) return null;
  const runId = rest.slice(0, slash);
  if (!RUN_ID.test(runId)) return null;
  return { runId, name: rest.slice(slash + 1), path };
}

/**
 * Every artifact of the organization, or of the given runs only, sorted by
 * path (run ids sort by creation time, so older runs come first).
 */
export async function listAllArtifacts(files: FileStore, org: OrgId, runIds?: readonly string[]): Promise<(FileInfo & { readonly ref: ArtifactRef })[]> {
  const found =
    runIds === undefined
      ? await files.list(org, ARTIFACTS_FOLDER)
      : (await Promise.all(runIds.filter((runId) => RUN_ID.test(runId)).map((runId) => files.list(org, artifactsFolder(runId))))).flat();
  return found
    .flatMap((file) => {
      const ref = artifactOfPath(file.path);
      return ref === null ? [] : [{ ...file, ref }];
    })
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

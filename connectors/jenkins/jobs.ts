/** Walks Jenkins jobs through folders, a page of `jobs{M,N}` at a time. */
import type { HttpClient } from '../shared/http-client.js';
import { jobPath } from './config.js';

interface JenkinsJob {
  readonly _class: string;
  readonly name: string;
  readonly fullName?: string;
  readonly url: string;
  /** the ball colour: blue (ok), red (failed), yellow (unstable), *_anime (running), notbuilt, disabled; absent for folders */
  readonly color?: string;
  readonly lastBuild?: { readonly number: number; readonly result: string | null; readonly timestamp: number } | null;
  readonly jobs?: readonly JenkinsJob[];
}

export interface ListedJob {
  full_name: string;
  kind: 'job' | 'folder';
  type: string;
  url: string;
  status: string | null;
  last_build: { number: number; result: string | null; started_at: string } | null;
}

const PAGE = 100;
const JOB_FIELDS = '_class,name,fullName,url,color,lastBuild[number,result,timestamp]';

const isFolder = (job: JenkinsJob): boolean => Array.isArray(job.jobs) || /Folder|OrganizationFolder|WorkflowMultiBranchProject/.test(job._class);

function present(job: JenkinsJob, parent: string): ListedJob {
  const fullName = job.fullName ?? (parent ? `${parent}/${job.name}` : job.name);
  return {
    full_name: fullName,
    kind: isFolder(job) ? 'folder' : 'job',
    type: job._class,
    url: job.url,
    status: job.color ?? null,
    last_build: job.lastBuild
      ? { number: job.lastBuild.number, result: job.lastBuild.result, started_at: new Date(job.lastBuild.timestamp).toISOString() }
      : null,
  };
}

/**
 * Jobs under `folder` (the root when empty), descending into folders up to
 * `depth` levels; stops after `limit` entries. Each level is paged with
 * Jenkins' tree range `jobs[...]{from,to}`.
 */
export async function listJobs(
  client: HttpClient,
  signal: AbortSignal,
  folder: string,
  depth: number,
  limit: number,
): Promise<{ jobs: ListedJob[]; truncated: boolean }> {
  const jobs: ListedJob[] = [];
  const walk = async (parent: string, level: number): Promise<boolean> => {
    for (let from = 0; ; from += PAGE) {
      signal.throwIfAborted();
      const { data } = await client.json<{ jobs?: JenkinsJob[] }>({
        path: `${jobPath(parent)}/api/json`,
        query: { tree: `jobs[${JOB_FIELDS},jobs[name]]{${from},${from + PAGE}}` },
        signal,
      });
      const page = data?.jobs ?? [];
      for (const job of page) {
        if (jobs.length === limit) return true;
        const listed = present(job, parent);
        jobs.push(listed);
        if (listed.kind === 'folder' && level < depth && (await walk(listed.full_name, level + 1))) return true;
      }
      if (page.length < PAGE) return false;
    }
  };
  const truncated = await walk(folder, 1);
  return { jobs, truncated };
}

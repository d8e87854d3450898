/** Shared by the task and hook suites: task creation, its runs, waiting for a run's status. */
import { eventually } from '../helpers/eventually.js';
import type { Session, TestServer } from '../helpers/server.js';

export async function createTask(server: TestServer, session: Session, body: Record<string, unknown>): Promise<any> {
  const created = await server.request('POST', '/tasks', { token: session.token, body });
  if (created.status !== 201) throw new Error(`create task: ${created.status} ${created.text}`);
  return created.body;
}

export async function runsOf(server: TestServer, session: Session, taskId: string): Promise<any[]> {
  const runs = await server.request('GET', `/tasks/${taskId}/runs?limit=200`, { token: session.token });
  if (runs.status !== 200) throw new Error(`runs: ${runs.status} ${runs.text}`);
  return runs.body.items as any[];
}

/** Waits until the run ends (succeeded, failed or cancelled); resolves with it. */
export function runEnds(server: TestServer, session: Session, taskId: string, runId: string): Promise<any> {
  return eventually(
    async () => {
      const run = await server.request('GET', `/tasks/${taskId}/runs/${runId}`, { token: session.token });
      if (run.status !== 200) throw new Error(`run: ${run.status} ${run.text}`);
      return ['succeeded', 'failed', 'cancelled'].includes(run.body.status as string) ? run.body : undefined;
    },
    { what: `run ${runId} to end`, timeout: 25_000 },
  );
}

/** Waits until the run has the status. */
export function runReaches(server: TestServer, session: Session, taskId: string, runId: string, status: string): Promise<any> {
  return eventually(
    async () => {
      const run = await server.request('GET', `/tasks/${taskId}/runs/${runId}`, { token: session.token });
      return run.body?.status === status ? run.body : undefined;
    },
    { what: `run ${runId} to be ${status}` },
  );
}

/** The path of a trigger url, relative to /api/v1. */
export const hookPath = (url: string): string => url.slice(url.indexOf('/api/v1') + '/api/v1'.length);

/** Shared by the suites that sync sources over HTTP: waiting for a sync job to end. */
import { expect } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import type { TestServer } from '../helpers/server.js';

/** Re-reads the job until it leaves `running`; resolves with its last read. */
export function jobEnds(server: TestServer, token: string, sourceId: string, jobId: string): Promise<any> {
  return eventually(
    async () => {
      const job = await server.request('GET', `/sources/${sourceId}/jobs/${jobId}`, { token });
      if (job.status !== 200) throw new Error(`job read failed: ${job.status} ${job.text}`);
      return job.body.status === 'running' ? undefined : job.body;
    },
    { what: `sync job ${jobId} to end`, timeout: 25_000 },
  );
}

/** Starts a sync (202) and waits for its job to end. */
export async function syncToEnd(server: TestServer, token: string, sourceId: string): Promise<any> {
  const started = await server.request('POST', `/sources/${sourceId}/sync`, { token });
  expect(started.status, started.text).toBe(202);
  return started.body.status === 'running' ? jobEnds(server, token, sourceId, started.body.id as string) : started.body;
}

/** Creates a source (201) and gives its id. */
export async function createSource(server: TestServer, token: string, body: Record<string, unknown>): Promise<string> {
  const created = await server.request('POST', '/sources', { token, body });
  expect(created.status, created.text).toBe(201);
  expect(created.body.id, created.text).toMatch(/^src_/);
  return created.body.id as string;
}

/** What the media suites share: an organization with a runway source on the fake, the tool results of a chat stream, a job's record. */
import { expect } from 'vitest';
import type { FakeRunwayServer } from '../fakes/runway/server.js';
import type { TestServer } from '../helpers/server.js';
import { wireOrganization, type ChatOrg, type SseStream } from '../runtime/chat-helpers.js';

/** polls every few ms: the suites wait on the fake, not on the defaults meant for a real platform */
export const FAST_POLLS: Record<string, string> = { MEDIA_POLL_BASE_MS: '5', MEDIA_POLL_MAX_MS: '40' };

export async function mediaOrg(server: TestServer, llm: Parameters<typeof wireOrganization>[1], runway: FakeRunwayServer, apiKey = runway.apiKey) {
  const org = await wireOrganization(server, llm, { approvalWrite: 'allow' });
  const source = await server.request('POST', '/sources', {
    token: org.session.token,
    body: { name: 'media', connector: 'runway', config: { api_key: apiKey, base_url: runway.url } },
  });
  expect(source.status, source.text).toBe(201);
  return org;
}

export const results = (stream: SseStream): Record<string, any> =>
  Object.fromEntries(stream.events.filter((event) => event.event === 'tool_result').map((event) => [event.data.tool_call_id, event.data.result]));
export const mediaJob = (server: TestServer, org: ChatOrg, id: string) => server.request('GET', `/media/jobs/${id}`, { token: org.session.token });
export const taskPolls = (runway: FakeRunwayServer, taskId: string): number =>
  runway.requests.filter((request) => request.method === 'GET' && request.path === `/v1/tasks/${taskId}`).length;

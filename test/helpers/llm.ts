/**
 * A started server whose agent runs talk to a fresh fake LLM (the operator's
 * LLM_API_KEY set to the fake's key): the start of every suite that runs chat,
 * tasks or tools through a model. `wireOrganization` (runtime/chat-helpers.ts)
 * then points an organization at the fake.
 */
import { FAKE_LLM_API_KEY, startFakeLlmServer, type FakeLlmServer } from '../fakes/llm/server.js';
import { wireOrganization, type ChatOrg } from '../runtime/chat-helpers.js';
import { startTestServer, type Session, type TestServer, type TestServerOptions } from './server.js';

export interface LlmServer {
  readonly server: TestServer;
  readonly llm: FakeLlmServer;
}

export async function startLlmServer(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<LlmServer> {
  const llm = await startFakeLlmServer();
  return { llm, server: await startTestServer({ LLM_API_KEY: FAKE_LLM_API_KEY, ...env }, options) };
}

/** The server first: its runs end before the model they talk to goes away. */
export async function stopLlmServer({ server, llm }: LlmServer): Promise<void> {
  await server.stop();
  await llm.close();
}

export interface WiredOrg extends LlmServer {
  /** the organization, its owner and conversation, talking to `llm` */
  readonly org: ChatOrg;
  /** `org.session`, for the suites that need only the caller */
  readonly owner: Session;
}

/** `startLlmServer` and one organization wired to its fake LLM. */
export async function startWiredOrg(env: Record<string, string> = {}, wiring: Parameters<typeof wireOrganization>[2] = {}): Promise<WiredOrg> {
  const started = await startLlmServer(env);
  const org = await wireOrganization(started.server, started.llm, wiring);
  return { ...started, org, owner: org.session };
}

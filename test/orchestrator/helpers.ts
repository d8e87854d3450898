/** Shared by the orchestrator suites: workflows, their runs, waiting for a run's state. */
import { eventually } from '../helpers/eventually.js';
import type { Session, TestServer } from '../helpers/server.js';

export const ON = { SERVICE_FEATURES_ORCHESTRATOR: 'true' };

export const agentStep = (id: string, instruction: string, extra: Record<string, unknown> = {}) => ({
  id,
  kind: 'agent',
  agent: 'default',
  instruction,
  ...extra,
});

export async function createWorkflow(server: TestServer, session: Session, body: Record<string, unknown>): Promise<any> {
  const created = await server.request('POST', '/orchestrator/workflows', { token: session.token, body });
  if (created.status !== 201) throw new Error(`create workflow: ${created.status} ${created.text}`);
  return created.body;
}

export async function startRun(server: TestServer, session: Session, workflowId: string, inputs: Record<string, unknown> = {}): Promise<any> {
  const started = await server.request('POST', `/orchestrator/workflows/${workflowId}/run`, { token: session.token, body: { inputs } });
  if (started.status !== 202) throw new Error(`run workflow: ${started.status} ${started.text}`);
  return started.body;
}

/** Waits until the run satisfies `done` (default: it ended); resolves with it. */
export function runUntil(
  server: TestServer,
  session: Session,
  workflowId: string,
  runId: string,
  done: (run: any) => boolean = ended,
  what = 'to end',
): Promise<any> {
  return eventually(
    async () => {
      const run = await server.request('GET', `/orchestrator/workflows/${workflowId}/runs/${runId}`, { token: session.token });
      if (run.status !== 200) throw new Error(`run: ${run.status} ${run.text}`);
      return done(run.body) ? run.body : undefined;
    },
    { what: `workflow run ${runId} ${what}`, timeout: 25_000 },
  );
}

const ended = (run: any): boolean => ['succeeded', 'failed', 'cancelled'].includes(run.status as string);

export const stepOf = (run: any, id: string): any => (run.steps as any[]).find((step) => step.id === id);

/** every text the model was sent in the user turns of a request */
export const userTexts = (body: Record<string, unknown> | null): string =>
  ((body?.['messages'] as { role: string; content: unknown }[] | undefined) ?? [])
    .filter((message) => message.role === 'user')
    .map((message) => (typeof message.content === 'string' ? message.content : JSON.stringify(message.content)))
    .join('\n');

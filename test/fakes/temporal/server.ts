/**
 * A Temporal frontend's HTTP API on 127.0.0.1 (grpc-gateway JSON, as served
 * by Temporal server >= 1.22 on its HTTP port): DescribeNamespace,
 * StartWorkflowExecution, DescribeWorkflowExecution and
 * GetWorkflowExecutionHistory (close event), with `Authorization: Bearer`
 * checked when a key is set. Errors answer grpc-gateway's `{code, message}`.
 *
 * What a started workflow does is decided by `behave(input)`: complete with a
 * value, or fail with a message. The first describe of an execution reports it
 * RUNNING, later ones its close status, so the service has to poll.
 * `failWith(503)` answers every request 503 (an engine that is down).
 *
 * For restarts: `hold(true)` keeps workflows started from then on RUNNING
 * until `finish(workflowId)` closes them (as a worker would, while the
 * service is down or after); `stallStarts(true)` records a start but never
 * answers it (the service stops while its StartWorkflowExecution is in
 * flight). A start repeated with the same requestId answers the same run
 * (`started: false`), as Temporal does; `starts` counts every start request.
 * RequestCancelWorkflowExecution (`POST .../workflows/{id}/cancel`) closes a
 * running workflow CANCELED and is recorded in `cancels`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

const JSON_PLAIN = Buffer.from('json/plain').toString('base64');

export type Behaviour = { readonly complete: unknown } | { readonly fail: string };

export interface StartedWorkflow {
  readonly namespace: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly workflowType: string;
  readonly taskQueue: string;
  readonly requestId: string;
  /** the decoded first input payload */
  readonly input: unknown;
  readonly authorization: string | undefined;
  describes: number;
  outcome: Behaviour | { readonly canceled: string };
  /** kept RUNNING until `finish` */
  held: boolean;
}

export interface FakeTemporal {
  readonly url: string;
  readonly workflows: Map<string, StartedWorkflow>;
  /** every request as `METHOD path` */
  readonly requests: string[];
  behave(decide: (input: any, workflowType: string) => Behaviour): void;
  /** every StartWorkflowExecution request, in order: workflow id and request id */
  readonly starts: { readonly workflowId: string; readonly requestId: string }[];
  /** every RequestCancelWorkflowExecution, in order: workflow id, run id, request id and reason */
  readonly cancels: { readonly workflowId: string; readonly runId: string | undefined; readonly requestId: string; readonly reason: string }[];
  /** every request answers this status (null: normal service) */
  failWith(status: number | null): void;
  /** workflows started from now on stay RUNNING until `finish` */
  hold(on: boolean): void;
  /** closes a held workflow with its behaviour's outcome (its next describe reports it closed) */
  finish(workflowId: string): void;
  /** starts from now on are recorded but never answered (until `stallStarts(false)`, which answers them) */
  stallStarts(on: boolean): void;
  close(): Promise<void>;
}

export async function startFakeTemporal(options: { readonly apiKey?: string; readonly namespaces?: readonly string[] } = {}): Promise<FakeTemporal> {
  const namespaces = new Set(options.namespaces ?? ['default']);
  const workflows = new Map<string, StartedWorkflow>();
  const requests: string[] = [];
  let decide: (input: any, workflowType: string) => Behaviour = () => ({ complete: { ok: true } });
  let failing: number | null = null;
  let holding = false;
  let stalling = false;
  const stalled: (() => void)[] = [];
  const starts: { workflowId: string; requestId: string }[] = [];
  const cancels: FakeTemporal['cancels'][number][] = [];

  const send = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const grpcError = (response: ServerResponse, status: number, code: number, message: string): void => send(response, status, { code, message, details: [] });

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'http://fake');
    requests.push(`${request.method} ${url.pathname}`);
    if (failing !== null) return grpcError(response, failing, 14, 'unavailable');
    if (options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return grpcError(response, 401, 16, 'Request unauthenticated');
    }
    const parts = url.pathname
      .split('/')
      .filter((part) => part !== '')
      .map(decodeURIComponent);
    // api v1 namespaces {ns} [workflows {id} [history]]
    if (parts[0] !== 'api' || parts[1] !== 'v1' || parts[2] !== 'namespaces' || parts[3] === undefined) return grpcError(response, 404, 5, 'Not Found');
    const namespace = parts[3];
    if (!namespaces.has(namespace)) return grpcError(response, 404, 5, `Namespace ${namespace} is not found.`);
    if (parts.length === 4 && request.method === 'GET') {
      return send(response, 200, {
        namespaceInfo: { name: namespace, state: 'NAMESPACE_STATE_REGISTERED', id: randomUUID() },
        config: {},
        isGlobalNamespace: false,
      });
    }
    if (parts[4] !== 'workflows' || parts[5] === undefined) return grpcError(response, 404, 5, 'Not Found');
    const workflowId = parts[5];
    const key = `${namespace}/${workflowId}`;
    if (parts.length === 6 && request.method === 'POST') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      starts.push({ workflowId, requestId: String(body.requestId) });
      const existing = workflows.get(key);
      if (existing) {
        if (existing.requestId === body.requestId) return send(response, 200, { runId: existing.runId, started: false });
        return grpcError(response, 409, 6, 'Workflow execution is already running.');
      }
      const payload = body.input?.payloads?.[0];
      if (
        typeof body.workflowType?.name !== 'string' ||
        typeof body.taskQueue?.name !== 'string' ||
        typeof body.requestId !== 'string' ||
        payload?.metadata?.encoding !== JSON_PLAIN ||
        typeof payload?.data !== 'string'
      ) {
        return grpcError(response, 400, 3, 'invalid StartWorkflowExecutionRequest');
      }
      const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
      const started: StartedWorkflow = {
        namespace,
        workflowId,
        runId: randomUUID(),
        workflowType: body.workflowType.name,
        taskQueue: body.taskQueue.name,
        requestId: body.requestId,
        input,
        authorization: request.headers.authorization,
        describes: 0,
        outcome: decide(input, body.workflowType.name),
        held: holding,
      };
      workflows.set(key, started);
      if (stalling) return void stalled.push(() => send(response, 200, { runId: started.runId, started: true }));
      return send(response, 200, { runId: started.runId, started: true });
    }
    const workflow = workflows.get(key);
    if (!workflow) return grpcError(response, 404, 5, `workflow not found for ID: ${workflowId}`);
    if (parts.length === 7 && parts[6] === 'cancel' && request.method === 'POST') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      cancels.push({ workflowId, runId: body.workflowExecution?.runId, requestId: String(body.requestId), reason: String(body.reason ?? '') });
      if (body.namespace !== namespace || body.workflowExecution?.workflowId !== workflowId)
        return grpcError(response, 400, 3, 'invalid RequestCancelWorkflowExecutionRequest');
      workflow.outcome = { canceled: String(body.reason ?? '') };
      workflow.held = false;
      workflow.describes = Math.max(workflow.describes, 1);
      return send(response, 200, {});
    }
    const closed =
      'complete' in workflow.outcome
        ? 'WORKFLOW_EXECUTION_STATUS_COMPLETED'
        : 'fail' in workflow.outcome
          ? 'WORKFLOW_EXECUTION_STATUS_FAILED'
          : 'WORKFLOW_EXECUTION_STATUS_CANCELED';
    if (parts.length === 6 && request.method === 'GET') {
      workflow.describes += 1;
      const status = workflow.held || workflow.describes === 1 ? 'WORKFLOW_EXECUTION_STATUS_RUNNING' : closed;
      return send(response, 200, {
        executionConfig: { taskQueue: { name: workflow.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' } },
        workflowExecutionInfo: {
          execution: { workflowId, runId: workflow.runId },
          type: { name: workflow.workflowType },
          startTime: new Date().toISOString(),
          status,
          historyLength: status === closed ? '11' : '5',
        },
      });
    }
    if (parts.length === 7 && parts[6] === 'history' && request.method === 'GET') {
      if (workflow.held) return send(response, 200, { history: { events: [] } });
      if (url.searchParams.get('historyEventFilterType') !== 'HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT')
        return grpcError(response, 400, 3, 'fake serves close events only');
      const event =
        'complete' in workflow.outcome
          ? {
              eventId: '11',
              eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED',
              workflowExecutionCompletedEventAttributes: {
                result: { payloads: [{ metadata: { encoding: JSON_PLAIN }, data: Buffer.from(JSON.stringify(workflow.outcome.complete)).toString('base64') }] },
                workflowTaskCompletedEventId: '10',
              },
            }
          : 'canceled' in workflow.outcome
            ? {
                eventId: '11',
                eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED',
                workflowExecutionCanceledEventAttributes: { workflowTaskCompletedEventId: '10' },
              }
            : {
                eventId: '11',
                eventType: 'EVENT_TYPE_WORKFLOW_EXECUTION_FAILED',
                workflowExecutionFailedEventAttributes: {
                  failure: { message: workflow.outcome.fail, source: 'TypeScriptSDK', applicationFailureInfo: { type: 'Error' } },
                  retryState: 'RETRY_STATE_RETRY_POLICY_NOT_SET',
                },
              };
      return send(response, 200, { history: { events: [event] } });
    }
    return grpcError(response, 404, 5, 'Not Found');
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch(() => grpcError(response, 500, 13, 'fake failed'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    workflows,
    requests,
    starts,
    cancels,
    behave: (next) => (decide = next),
    failWith: (status) => (failing = status),
    hold: (on) => (holding = on),
    finish: (workflowId) => {
      const found = [...workflows.values()].find((workflow) => workflow.workflowId === workflowId);
      if (!found) throw new Error(`fake temporal: no workflow ${workflowId}`);
      // the describe after this one reports it closed
      found.held = false;
      found.describes = Math.max(found.describes, 1);
    },
    stallStarts: (on) => {
      stalling = on;
      if (!on) for (const answer of stalled.splice(0)) answer();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

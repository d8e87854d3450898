/**
 * Engine `temporal`: the Temporal frontend's HTTP API (grpc-gateway JSON,
 * Temporal server >= 1.22, Temporal Cloud), with `Authorization: Bearer
 * <api_key>` when a key is set.
 *
 * - start: `POST /api/v1/namespaces/{ns}/workflows/{workflowId}` with
 *   workflowType, taskQueue, one `json/plain` payload and requestId (the
 *   dispatch id, so a repeated start is the same execution)
 * - state: `GET /api/v1/namespaces/{ns}/workflows/{workflowId}`
 *   (`workflowExecutionInfo.status`), then the close event of
 *   `GET .../history?historyEventFilterType=HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT`
 *   for the result or the failure
 * - cancel: `POST .../workflows/{workflowId}/cancel` (RequestCancelWorkflowExecution)
 * - health: `GET /api/v1/namespaces/{ns}`
 *
 * Namespace, task queue and workflow type come from the gateway's `context`
 * (`namespace` (default `default`), `task_queue`, `workflow_type`); a dispatch's
 * `input.temporal` object may override them.
 */
import { ServiceError } from '../../runtime/errors.js';
import type { EgressGuard } from '../../runtime/net/egress.js';
import type { GatewayDoc } from './documents.js';
import { answerMessage, callEngine, joinUrl, probeVerdict, type DispatchStart, type Engine, type Outcome, type StartResult } from './engines.js';

const ENCODING_JSON = Buffer.from('json/plain').toString('base64');

interface Target {
  readonly namespace: string;
  readonly taskQueue: string;
  readonly workflowType: string;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);

/** the namespace, task queue and workflow type of a dispatch; 400 naming what is missing */
export function temporalTarget(context: Record<string, unknown>, input: Record<string, unknown> = {}): Target {
  const override = input['temporal'] !== null && typeof input['temporal'] === 'object' ? (input['temporal'] as Record<string, unknown>) : {};
  const taskQueue = text(override['task_queue']) ?? text(context['task_queue']);
  const workflowType = text(override['workflow_type']) ?? text(context['workflow_type']);
  const missing = [taskQueue === undefined ? 'task_queue' : null, workflowType === undefined ? 'workflow_type' : null].filter((field) => field !== null);
  if (taskQueue === undefined || workflowType === undefined) {
    throw new ServiceError('validation_error', `a temporal gateway needs ${missing.join(' and ')} in its context (or the dispatch's input.temporal)`, {
      issues: missing.map((field) => ({ path: `context.${field}`, message: 'required for engine_type temporal' })),
    });
  }
  return { namespace: text(override['namespace']) ?? text(context['namespace']) ?? 'default', taskQueue, workflowType };
}

/** a `json/plain` payload as the HTTP API carries it: metadata values and data base64 */
const payload = (value: unknown): Record<string, unknown> => ({
  metadata: { encoding: ENCODING_JSON },
  data: Buffer.from(JSON.stringify(value), 'utf8').toString('base64'),
});

/** A payload back to JSON: the full form (base64 data) or the HTTP API's shorthand (the value itself). */
function decodePayload(raw: unknown): unknown {
  const full = raw as { data?: unknown; metadata?: unknown } | null;
  if (full !== null && typeof full === 'object' && typeof full.data === 'string' && full.metadata !== undefined) {
    const data = Buffer.from(full.data, 'base64').toString('utf8');
    try {
      return JSON.parse(data) as unknown;
    } catch {
      return data;
    }
  }
  return raw;
}

const asOutput = (value: unknown): Record<string, unknown> | string | null => {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  return { value };
};

const CLOSED_FAILED: Record<string, string> = {
  WORKFLOW_EXECUTION_STATUS_FAILED: 'workflow failed',
  WORKFLOW_EXECUTION_STATUS_CANCELED: 'workflow canceled',
  WORKFLOW_EXECUTION_STATUS_TERMINATED: 'workflow terminated',
  WORKFLOW_EXECUTION_STATUS_TIMED_OUT: 'workflow timed out',
};

export class TemporalEngine implements Engine {
  constructor(private readonly egress: EgressGuard) {}

  private headers(apiKey: string | null): Record<string, string> {
    return { 'content-type': 'application/json', ...(apiKey === null ? {} : { authorization: `Bearer ${apiKey}` }) };
  }

  private workflowUrl(gateway: GatewayDoc, namespace: string, workflowId: string): string {
    return joinUrl(gateway.base_url, `/api/v1/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`);
  }

  probe(gateway: GatewayDoc, apiKey: string | null): Promise<string | null> {
    const namespace = text(gateway.context['namespace']) ?? 'default';
    const url = joinUrl(gateway.base_url, `/api/v1/namespaces/${encodeURIComponent(namespace)}`);
    return probeVerdict(
      () => callEngine(this.egress, url, { method: 'GET', headers: this.headers(apiKey) }),
      (answer) => answer.status >= 200 && answer.status < 300,
    );
  }

  async start(gateway: GatewayDoc, apiKey: string | null, request: DispatchStart): Promise<StartResult> {
    const target = temporalTarget(gateway.context, request.input);
    const workflowId = `svc-${request.dispatchId}`;
    const body = {
      namespace: target.namespace,
      workflowId,
      workflowType: { name: target.workflowType },
      taskQueue: { name: target.taskQueue },
      input: {
        payloads: [payload({ workflow_run_id: request.workflowRunId, step_id: request.stepId, input: request.input, context: gateway.context })],
      },
      requestId: request.dispatchId,
      identity: 'agent-context-service',
    };
    const answer = await callEngine(this.egress, this.workflowUrl(gateway, target.namespace, workflowId), {
      method: 'POST',
      headers: this.headers(apiKey),
      body: JSON.stringify(body),
    });
    if (answer.status < 200 || answer.status >= 300) return { kind: 'settled', outcome: { status: 'failed', output: null, error: answerMessage(answer) } };
    const runId = text((answer.json as { runId?: unknown } | null)?.runId);
    return { kind: 'started', externalRef: `${target.namespace}/${workflowId}${runId === undefined ? '' : `/${runId}`}` };
  }

  /** RequestCancelWorkflowExecution: the workflow is asked to cancel (its worker decides how); a refusal is ignored */
  async cancel(gateway: GatewayDoc, apiKey: string | null, externalRef: string, dispatchId: string): Promise<void> {
    const [namespace = 'default', workflowId = '', runId] = externalRef.split('/');
    await callEngine(this.egress, `${this.workflowUrl(gateway, namespace, workflowId)}/cancel`, {
      method: 'POST',
      headers: this.headers(apiKey),
      body: JSON.stringify({
        namespace,
        workflowExecution: { workflowId, ...(runId === undefined ? {} : { runId }) },
        identity: 'agent-context-service',
        requestId: `cancel-${dispatchId}`,
        reason: 'cancelled by agent-context-service',
      }),
    });
  }

  async poll(gateway: GatewayDoc, apiKey: string | null, externalRef: string): Promise<Outcome | null> {
    const [namespace = 'default', workflowId = '', runId] = externalRef.split('/');
    const url = this.workflowUrl(gateway, namespace, workflowId);
    const runQuery = runId === undefined ? '' : `execution.runId=${encodeURIComponent(runId)}`;
    const described = await callEngine(this.egress, runQuery === '' ? url : `${url}?${runQuery}`, { method: 'GET', headers: this.headers(apiKey) });
    if (described.status < 200 || described.status >= 300) return { status: 'failed', output: null, error: answerMessage(described) };
    const status = text((described.json as { workflowExecutionInfo?: { status?: unknown } } | null)?.workflowExecutionInfo?.status);
    if (status === undefined || status === 'WORKFLOW_EXECUTION_STATUS_RUNNING' || status === 'WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW') return null;
    const query = [runQuery, 'historyEventFilterType=HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT'].filter((part) => part !== '').join('&');
    const history = await callEngine(this.egress, `${url}/history?${query}`, { method: 'GET', headers: this.headers(apiKey) });
    const events = (history.json as { history?: { events?: unknown } } | null)?.history?.events;
    const close = (Array.isArray(events) ? events.at(-1) : undefined) as Record<string, unknown> | undefined;
    if (status === 'WORKFLOW_EXECUTION_STATUS_COMPLETED') {
      const attributes = close?.['workflowExecutionCompletedEventAttributes'] as { result?: { payloads?: unknown[] } } | undefined;
      return { status: 'succeeded', output: asOutput(decodePayload(attributes?.result?.payloads?.[0])) };
    }
    const failure = (close?.['workflowExecutionFailedEventAttributes'] as { failure?: { message?: unknown } } | undefined)?.failure;
    return { status: 'failed', output: null, error: text(failure?.message) ?? CLOSED_FAILED[status] ?? `workflow ended ${status}` };
  }
}

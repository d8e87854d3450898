/**
 * The port through which a workflow `gateway` step (and a task naming a gateway) dispatches to an external
 * orchestration engine. The orchestrator only declares it; another module
 * implements it and is wired in optionally (no dispatcher: the step fails
 * with `gateway_unavailable`). A dispatch may be repeated for the same
 * `workflow_run_id` + `step_id` after a restart: implementations use the pair
 * as an idempotency key.
 */
interface GatewayDispatchRequest {
  readonly workflow_run_id: string;
  readonly step_id: string;
  readonly input: Record<string, unknown>;
}

interface GatewayDispatchResult {
  /** `cancelled`: `cancel` stopped it */
  readonly status: 'succeeded' | 'failed' | 'cancelled';
  readonly output: Record<string, unknown> | string | null;
  readonly error?: string;
}

export interface GatewayDispatch {
  /** `gateway`: id or name; null = the organization's default */
  dispatch(orgId: string, gateway: string | null, request: GatewayDispatchRequest): Promise<GatewayDispatchResult>;
  /**
   * Stops the dispatch of this run and step if it is still open: its
   * `dispatch` call answers `cancelled`. False when there is none, or it ended.
   */
  cancel?(orgId: string, request: Omit<GatewayDispatchRequest, 'input'>): Promise<boolean>;
}

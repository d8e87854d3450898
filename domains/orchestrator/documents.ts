/** The documents of the orchestrator, as the metadata store keeps them (collections: domains/collections.ts). */
import type { WorkflowRunStatus, WorkflowStepState } from '../../actors/workflow.machine.js';
import type { StoredFields } from '../../runtime/store/types.js';

/** A structural condition on an earlier step's output: no code is evaluated (see conditions.ts). */
export interface StepCondition {
  /** the step whose output is read; must be among the step's `needs` */
  readonly step: string;
  /** dot path into the parsed output (`a.b.0`); empty or absent: the whole output */
  readonly path?: string;
  readonly equals?: unknown;
  readonly contains?: string;
  readonly matches?: string;
}

interface StepBase {
  readonly id: string;
  readonly needs: readonly string[];
  readonly when?: StepCondition;
}

interface AgentStep extends StepBase {
  readonly kind: 'agent';
  /** an agent's name or id */
  readonly agent: string;
  /** Handlebars over `inputs` and `steps.<id>.output` */
  readonly instruction: string;
  readonly cost_cap_usd?: number | null;
}

interface ApprovalStep extends StepBase {
  readonly kind: 'approval';
  readonly message: string;
}

interface GatewayStep extends StepBase {
  readonly kind: 'gateway';
  /** the gateway's id or name; null: the organization's default */
  readonly gateway: string | null;
  /** string values are templates like an agent step's instruction */
  readonly input: Record<string, unknown>;
}

export type StepDef = AgentStep | ApprovalStep | GatewayStep;

export interface WorkflowDoc extends StoredFields {
  readonly name: string;
  readonly description: string | null;
  readonly steps: readonly StepDef[];
  /** the sum of every step's cost a run may reach; null: none */
  readonly cost_cap_usd: number | null;
  readonly created_by: string;
}

export type { WorkflowStepState as StepState } from '../../actors/workflow.machine.js';

export interface WorkflowRunDoc extends StoredFields {
  readonly workflow_id: string;
  readonly status: WorkflowRunStatus;
  readonly reason: string | null;
  readonly error_message: string | null;
  readonly inputs: Record<string, unknown>;
  /** the workflow's steps and cap when the run started: editing the workflow changes no run */
  readonly definition: { readonly steps: readonly StepDef[]; readonly cost_cap_usd: number | null };
  readonly steps: readonly WorkflowStepState[];
  readonly cost_usd: number;
  readonly created_by: string;
  readonly started_at: string;
  readonly finished_at: string | null;
}

/**
 * The orchestrator (feature `orchestrator`): workflows (named graphs of
 * agent, approval and gateway steps), their runs, and what a caller does to a
 * run (cancel, answer an approval step or an approval a step's agent run
 * asked for). The runs themselves are actors
 * (runner.ts).
 */
import type { Collections } from '../collections.js';
import { isoAt, type RuntimeClock } from '../../runtime/clock.js';
import { conflict, ServiceError } from '../../runtime/errors.js';
import { unique } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { StepDef, WorkflowDoc, WorkflowRunDoc } from './documents.js';
import type { WorkflowRunner } from './runner.js';
import { validateSteps } from './validation.js';
import type { AgentRuntime } from '../../runtime/agent/agent-runtime.js';
import { answerRunApproval, type RunApprovalAnswer } from '../tasks/run-approval.js';

export interface WorkflowFields {
  readonly name: string;
  readonly description?: string | null | undefined;
  readonly steps: readonly StepDef[];
  readonly cost_cap_usd?: number | null | undefined;
}

const ACTIVE_RUN = ['running', 'waiting_approval'] as const;

export class OrchestratorService {
  constructor(
    private readonly collections: Pick<Collections, 'workflows' | 'workflowRuns' | 'agents' | 'agentRuns' | 'agentRunEvents'>,
    private readonly runner: WorkflowRunner,
    private readonly clock: Pick<RuntimeClock, 'now'>,
    private readonly agentRuntime: Pick<AgentRuntime, 'pendingApproval' | 'answer'>,
  ) {}

  get listing(): Pick<Collections['workflows'], 'list' | 'revision'> {
    return this.collections.workflows;
  }

  get runListing(): Pick<Collections['workflowRuns'], 'list' | 'revision'> {
    return this.collections.workflowRuns;
  }

  async create(org: OrgId, userId: string, fields: WorkflowFields): Promise<WorkflowDoc> {
    await this.check(org, fields.steps);
    return unique('workflow', () =>
      this.collections.workflows.insert(org, {
        name: fields.name,
        description: fields.description ?? null,
        steps: fields.steps,
        cost_cap_usd: fields.cost_cap_usd ?? null,
        created_by: userId,
      }),
    );
  }

  /** by id, or by name */
  async get(org: OrgId, idOrName: string): Promise<WorkflowDoc> {
    const { workflows } = this.collections;
    const workflow = (await workflows.get(org, idOrName)) ?? (await workflows.findOne(org, { name: idOrName }));
    if (!workflow) throw new ServiceError('not_found', `workflow ${idOrName} not found`);
    return workflow;
  }

  /** PATCH (absent fields stay) and PUT (the whole definition); runs already started keep the definition they started with */
  async update(org: OrgId, id: string, patch: Partial<WorkflowFields>): Promise<WorkflowDoc> {
    const workflow = await this.get(org, id);
    if (patch.steps !== undefined) await this.check(org, patch.steps);
    const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    const updated = await unique('workflow', () => this.collections.workflows.update(org, workflow.id, changes));
    if (!updated) throw new ServiceError('not_found', `workflow ${id} not found`);
    return updated;
  }

  /** refused while a run is in flight (cancel it first); the finished runs go with it */
  async delete(org: OrgId, id: string): Promise<void> {
    const workflow = await this.get(org, id);
    for (const status of ACTIVE_RUN) {
      const active = await this.collections.workflowRuns.count(org, { workflow_id: workflow.id, status });
      if (active > 0) throw conflict(`workflow ${workflow.name} has runs in flight; cancel them first`, { active_runs: active });
    }
    await this.collections.workflows.delete(org, workflow.id);
    await this.collections.workflowRuns.deleteWhere(org, { workflow_id: workflow.id });
  }

  /** Stores a run with every step pending and starts its actor. */
  async run(org: OrgId, userId: string, id: string, inputs: Record<string, unknown>): Promise<WorkflowRunDoc> {
    const workflow = await this.get(org, id);
    const at = isoAt(this.clock.now());
    const doc = await this.collections.workflowRuns.insert(org, {
      workflow_id: workflow.id,
      status: 'running',
      reason: null,
      error_message: null,
      inputs,
      definition: { steps: workflow.steps, cost_cap_usd: workflow.cost_cap_usd },
      steps: workflow.steps.map((step) => ({
        id: step.id,
        kind: step.kind,
        status: 'pending' as const,
        agent_run_id: null,
        output: null,
        cost_usd: 0,
        reason: null,
        error: null,
        attempts: 0,
        started_at: null,
        finished_at: null,
        decided_by: null,
        comment: null,
      })),
      cost_usd: 0,
      created_by: userId,
      started_at: at,
      finished_at: null,
    });
    try {
      this.runner.spawn(org, doc);
    } catch (error) {
      await this.collections.workflowRuns.update(org, doc.id, {
        status: 'failed',
        reason: 'shutdown',
        error_message: 'the service is shutting down',
        finished_at: at,
      });
      throw new ServiceError('service_unavailable', 'the service is shutting down; retry shortly', { cause: String(error) });
    }
    await this.runner.flush(doc.id);
    return (await this.collections.workflowRuns.get(org, doc.id)) ?? doc;
  }

  /** A run of that workflow; another workflow's run answers 404. */
  async getRun(org: OrgId, workflowId: string, runId: string): Promise<WorkflowRunDoc> {
    const workflow = await this.get(org, workflowId);
    await this.runner.flush(runId);
    const run = await this.collections.workflowRuns.get(org, runId);
    if (!run || run.workflow_id !== workflow.id) throw new ServiceError('not_found', `run ${runId} not found`);
    return run;
  }

  /** Cancels a run in flight: running steps' agent runs are cancelled, the rest marked cancelled. */
  async cancel(org: OrgId, workflowId: string, runId: string, userId: string): Promise<WorkflowRunDoc> {
    const run = await this.getRun(org, workflowId, runId);
    if (!ACTIVE_RUN.includes(run.status as (typeof ACTIVE_RUN)[number])) throw conflict('the run is already finished', { status: run.status });
    this.sendOr503(runId, { type: 'CANCEL', by: userId });
    return this.getRun(org, workflowId, runId);
  }

  /** Answers an approval step waiting for it. */
  async decide(org: OrgId, workflowId: string, runId: string, stepId: string, answer: { approved: boolean; comment: string | null; userId: string }) {
    const run = await this.getRun(org, workflowId, runId);
    const step = run.steps.find((candidate) => candidate.id === stepId);
    if (!step) throw new ServiceError('not_found', `step ${stepId} not found`);
    if (step.kind !== 'approval') throw conflict(`step ${stepId} is not an approval step`, { kind: step.kind });
    if (step.status !== 'waiting_approval') throw conflict(`step ${stepId} is not waiting for an approval`, { status: step.status });
    this.sendOr503(runId, { type: 'DECIDE', stepId, approved: answer.approved, by: answer.userId, comment: answer.comment });
    return this.getRun(org, workflowId, runId);
  }

  /**
   * Answers an approval a running agent step's agent run asked for (a write
   * tool): 404 when the step is no agent step of this run or the approval is
   * not its run's, 409 once it no longer waits.
   */
  async answerStepApproval(org: OrgId, workflowId: string, runId: string, stepId: string, answer: Omit<RunApprovalAnswer, 'orgId'>) {
    const run = await this.getRun(org, workflowId, runId);
    const step = run.steps.find((candidate) => candidate.id === stepId);
    if (!step || step.kind !== 'agent' || step.agent_run_id === null) throw new ServiceError('not_found', `approval ${answer.approvalId} not found`);
    const deps = { agentRuntime: this.agentRuntime, collections: this.collections };
    return answerRunApproval(deps, { id: step.agent_run_id, status: step.status }, { ...answer, orgId: org });
  }

  private sendOr503(runId: string, event: Parameters<WorkflowRunner['send']>[1]): void {
    if (!this.runner.send(runId, event)) throw new ServiceError('service_unavailable', 'the run is not live in this process (shutting down); retry shortly');
  }

  /** The graph's rules, then every agent step's agent (name or id) in this organization. */
  private async check(org: OrgId, steps: readonly StepDef[]): Promise<void> {
    validateSteps(steps);
    const { agents } = this.collections;
    const known = new Set<string>();
    for (const step of steps) {
      if (step.kind !== 'agent' || known.has(step.agent)) continue;
      const agent = (await agents.get(org, step.agent)) ?? (await agents.findOne(org, { name: step.agent }));
      if (!agent) throw new ServiceError('validation_error', `step "${step.id}" names unknown agent "${step.agent}"`, { step: step.id, agent: step.agent });
      known.add(step.agent);
    }
  }
}

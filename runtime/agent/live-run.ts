/**
 * What a run is started with (StartRunRequest) and what the runtime holds
 * of it while it is live (LiveRun).
 */
import type { AgentRunKind } from '../collections.js';
import type { AgentRunInput, DeferredWait, RunEnd } from '../../actors/agent-run.types.js';
import type { CatalogSource, ToolCatalog } from '../tools/catalog.js';
import type { ToolInterceptor } from '../tools/interceptors.js';
import type { LlmEndpoint } from '../llm/index.js';
import type { LlmProvider } from '../llm/types.js';
import type { PolicySubject } from '../tools/tool-gate.js';
import type { OrgId } from '../store/types.js';
import type { RunFeed } from './run-feed.js';

/** What starting a run takes: the machine's input (less its id, which may be given) and the run's surroundings. */
export interface StartRunRequest extends Omit<AgentRunInput, 'runId'> {
  /** the run's id when the caller needs it before the start (a chat message names it); default: a new one */
  readonly runId?: string;
  readonly orgId: OrgId;
  /** who the run acts for */
  readonly userId: string;
  readonly kind: AgentRunKind;
  readonly conversationId?: string | null;
  readonly messageId?: string | null;
  readonly taskId?: string | null;
  /** stored on the run as its input */
  readonly input: Record<string, unknown>;
  readonly provider: LlmProvider;
  readonly model: string;
  /** where `provider` calls and with which key (a turn runner elsewhere rebuilds the provider from it); absent: turns stay in-process */
  readonly endpoint?: LlmEndpoint;
  readonly temperature?: number;
  /** sources the run may see (the built-in sourceless tools are always there) */
  readonly sources?: readonly CatalogSource[];
  /** the realm the run works in (graph and memory tools scope to it); default `default` */
  readonly realm?: string;
  /** wrapped around every tool call of this run (policy, read-only rules, audit), first = outermost */
  readonly interceptors?: readonly ToolInterceptor[];
  /** the channel binding the run answers for (policy input `subject.binding`) */
  readonly bindingId?: string | null;
  /** called once with the end and the reply's whole text, after the run's writes */
  readonly onEnd?: (end: RunEnd, text: string) => Promise<void>;
  /** cancelled while it was being launched: the run starts and ends at once as cancelled, before any model call */
  readonly cancelled?: boolean;
  /** how the run's site rebuilds it after it was parked (parking.ts); absent: the run waits for approvals live */
  readonly resume?: { readonly site: string; readonly data: Record<string, unknown> };
}

export interface LiveRun {
  readonly id: string;
  readonly request: StartRunRequest;
  readonly feed: RunFeed;
  readonly catalog: ToolCatalog;
  /** the run's reply text: every text delta of its in-process turns, in order; the text of each handed-over turn once taken */
  text: string;
  /** approvals of this run still waiting */
  readonly approvalIds: Set<string>;
  finished: boolean;
  /** when the run began its current wait (an approval, a handed-over result or turn: it parks after AGENT_PARK_AFTER_MS of it) */
  waitingSince?: number | undefined;
  /** the turn being handed over, until the machine waits on it (its performer may ask for its input before that) */
  handingOver?: DeferredWait | undefined;
  /** when the run times out (ms since the epoch) */
  readonly runDue: number;
}

/** who a run's policies judge */
export const subjectOf = (request: StartRunRequest): PolicySubject => ({
  task: request.taskId ?? null,
  binding: request.bindingId ?? null,
  user: request.userId,
});

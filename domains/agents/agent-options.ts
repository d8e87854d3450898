/**
 * An agent's type and stored config turned into the options of one run, the
 * same for chat, task and binding runs (domains/agents/agent-types.ts documents
 * each option and its default). Stored keys the catalog no longer knows are
 * ignored here: an agent saved before an option was removed still runs.
 */
import type { ToolInterceptor } from '../../runtime/tools/interceptors.js';
import type { AgentDoc } from './documents.js';
import type { MemoryDoc } from '../memory/documents.js';
import { recallMemories } from '../../domains/memory/recall.js';
import { readOnlyInterceptorWith } from '../../domains/channels/read-only.js';
import type { OrgCollection, OrgId } from '../../runtime/store/types.js';

const DEFAULT_MAX_TURNS = 20;
const DEFAULT_TEMPERATURE = 0.2;
/** memory entries put in front of the model per message when recall is on */
const RECALLED_PER_MESSAGE = 5;

const READ_ONLY_AGENT_NOTICE =
  'This agent is read-only: write actions are not allowed for it, so nothing was changed. Say so and, if useful, what a person could do.';

/** Built-in instructions of each type, after the launch site's own (system_prompt replaces both). */
const TYPE_INSTRUCTIONS: Readonly<Record<string, string>> = {
  assistant: '',
  sre: 'You diagnose infrastructure problems: read builds, deployments, clusters and dashboards, explain the cause and the evidence, and propose a fix.',
  code_reviewer: 'You review pull requests on the code host: point out concrete problems with file and line, and say what to change.',
  summarizer: 'You condense threads, documents and activity into short, faithful summaries.',
};

const FOCUS_DEFAULT = ['correctness', 'security', 'tests'];

export interface AgentRunOptions {
  /** the run's system message */
  readonly systemPrompt: string;
  /** the agent's model; null: the organization's llm_model */
  readonly model: string | null;
  readonly maxTurns: number;
  readonly temperature: number;
  /** write-effect tools are refused (whatever the approval defaults) */
  readonly readOnly: boolean;
  /** the read-only refusal for the run's tool calls (empty when not read-only) */
  readonly interceptors: readonly ToolInterceptor[];
  /** memory recalled per message: the realms (null: all), or null when recall is off */
  readonly recall: { readonly realms: readonly string[] | null } | null;
}

export interface AgentOptionsInput {
  /** the agent of the run; null when it was deleted (the site's defaults apply) */
  readonly agent: Pick<AgentDoc, 'agent_type' | 'config'> | null;
  /** the launch site's own instructions (chat, task, Slack thread) */
  readonly basePrompt: string;
  /** a prompt the site stores itself (task / channel system_prompt): replaces the agent's */
  readonly sitePrompt?: string | null;
  /** the site is read-only on its own (a read-only binding): its notice is used */
  readonly siteReadOnly?: boolean;
}

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
const strings = (value: unknown): string[] | null => (Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : null);

/** Instructions derived from type options, appended whatever the system prompt. */
function optionInstructions(type: string, config: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (type === 'sre') {
    const channel = text(config['escalation_channel']);
    if (channel !== null) out.push(`When a diagnosis needs a human, say so explicitly and name the escalation channel ${channel}.`);
  }
  if (type === 'code_reviewer') {
    out.push(`Review focus: ${(strings(config['focus']) ?? FOCUS_DEFAULT).join(', ')}. Leave aside what is outside this focus.`);
  }
  if (type === 'summarizer') {
    const format = config['format'] === 'bullets' ? 'a bulleted list' : 'prose paragraphs';
    out.push(`Write the summary as ${format}, at most ${num(config['max_words']) ?? 200} words.`);
  }
  return out;
}

/** The effective options of a run of `agent` (see agent-types.ts for each option's meaning and default). */
export function agentRunOptions(input: AgentOptionsInput): AgentRunOptions {
  // no agent (deleted): the launch site's defaults, nothing type-specific
  const type = input.agent?.agent_type ?? '';
  const config = input.agent?.config ?? {};
  const builtIn = [input.basePrompt, TYPE_INSTRUCTIONS[type] ?? ''].filter((part) => part !== '').join('\n\n');
  const prompt = input.sitePrompt ?? text(config['system_prompt']) ?? builtIn;
  const readOnlyAgent = type === 'sre' && config['read_only'] !== false;
  const readOnly = readOnlyAgent || input.siteReadOnly === true;
  const recallOn = type === 'assistant' && config['recall_memory'] !== false;
  // a read-only site says so in its own prompt
  const readOnlyLine = readOnlyAgent && input.siteReadOnly !== true ? [`This agent is read-only: write tools are refused. ${READ_ONLY_AGENT_NOTICE}`] : [];
  return {
    systemPrompt: [prompt, ...optionInstructions(type, config), ...readOnlyLine].join('\n\n'),
    model: text(config['model']),
    maxTurns: num(config['max_turns']) ?? DEFAULT_MAX_TURNS,
    temperature: num(config['temperature']) ?? DEFAULT_TEMPERATURE,
    readOnly,
    // a read-only site keeps its own notice (the model relays it); otherwise the agent's
    interceptors: readOnly ? [readOnlyInterceptorWith(input.siteReadOnly === true ? null : READ_ONLY_AGENT_NOTICE)] : [],
    recall: recallOn ? { realms: strings(config['memory_realms']) } : null,
  };
}

/**
 * The memory entries relevant to `question`, as a system message for the
 * run (null when recall is off or nothing matches). Realms narrow the search.
 */
export async function recalledMemory(
  memory: OrgCollection<MemoryDoc>,
  org: OrgId,
  question: string,
  recall: AgentRunOptions['recall'],
): Promise<string | null> {
  if (recall === null) return null;
  const realms = recall.realms ?? [undefined];
  const found = (await Promise.all(realms.map((realm) => recallMemories(memory, org, { query: question, realm, limit: RECALLED_PER_MESSAGE }))))
    .flat()
    .sort((a, b) => b.score - a.score)
    .slice(0, RECALLED_PER_MESSAGE);
  if (found.length === 0) return null;
  const lines = found.map(({ doc }) => `- [${doc.kind}, realm ${doc.realm}] ${doc.title === null ? '' : `${doc.title}: `}${doc.text}`);
  return ['Memory entries that may be relevant (recalled for this message):', ...lines].join('\n');
}

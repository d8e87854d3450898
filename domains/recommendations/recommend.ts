/**
 * Task recommendations: suggestions the data supports, each with a task body
 * ready for `POST /tasks` and the evidence behind it.
 *
 * - recurring questions: user chat messages of the last `days`, clustered
 *   (questions.ts); a cluster asked at least `min_occurrences` times in at
 *   least two conversations becomes a weekday-morning task answering it;
 * - connector state: code-host, build-server and deployment-platform sources
 *   no task pins (`enabled_source_ids`) -> the weekday-morning summary task;
 *   each build-server / deployment-platform source no webhook task pins ->
 *   a failure-webhook diagnosis task (try it with the named sample);
 * - graph patterns (graph-patterns.ts): a realm whose graph holds cluster
 *   workloads -> a weekday-morning cluster health check in that realm;
 *   without a graph store this signal is reported under `skipped`.
 *
 * A suggestion whose task name an existing task already has is left out.
 */
import { createHash } from 'node:crypto';
import type { Collections } from '../collections.js';
import type { GraphStore } from '../../runtime/graph/store.js';
import type { OrgId } from '../../runtime/store/types.js';
import { clusterPatterns, realmLabelCounts, type ClusterPattern } from './graph-patterns.js';
import { clusterQuestions, type Question } from './questions.js';

/** weekday mornings, 08:00 UTC */
const WEEKDAY_MORNING_CRON = '0 8 * * 1-5';
const CODE_HOST = ['github'];
const BUILD_SERVER = ['jenkins'];
const DEPLOY_PLATFORM = ['vercel'];
const CHAT = ['slack'];
const EXAMPLES = 3;

export interface RecommendationOptions {
  /** look-back window for chat questions */
  readonly days: number;
  readonly minOccurrences: number;
  readonly limit: number;
  /** the runtime clock's time: the window of `days` ends here */
  readonly now: Date;
}

interface TaskBody {
  readonly name: string;
  readonly realm?: string;
  readonly trigger: { readonly kind: 'schedule'; readonly cron: string } | { readonly kind: 'webhook' };
  readonly input_template: { readonly instruction: string };
  readonly enabled_source_ids?: string[];
  readonly approval_defaults: { readonly write: 'ask' };
  readonly enabled: boolean;
}

interface Recommendation {
  /** stable for the same suggestion, so a client can dismiss it */
  readonly id: string;
  readonly kind: 'recurring_question' | 'weekday_summary' | 'failure_diagnosis' | 'cluster_health';
  readonly title: string;
  readonly reason: string;
  readonly evidence: Record<string, unknown>;
  readonly task: TaskBody;
  /** a built-in webhook sample to fire the created task with (POST /webhook-samples/:name/run) */
  readonly try_with_sample?: string;
}

export interface Recommendations {
  readonly items: Recommendation[];
  readonly window_days: number;
  readonly skipped: { readonly signal: string; readonly reason: string }[];
}

interface SourceRef {
  readonly id: string;
  readonly name: string;
  readonly connector: string;
}

interface TaskRef {
  readonly name: string;
  readonly trigger_kind: string;
  readonly enabled_source_ids: readonly string[] | null;
  readonly input_template: Record<string, unknown> | null;
}

const stableId = (kind: string, key: string): string => `${kind}:${createHash('sha256').update(key).digest('hex').slice(0, 16)}`;
const truncate = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

export class TaskRecommender {
  constructor(
    private readonly collections: Pick<Collections, 'chatMessages' | 'sources' | 'tasks' | 'realms'>,
    private readonly graph: GraphStore | null,
  ) {}

  async recommend(org: OrgId, options: RecommendationOptions): Promise<Recommendations> {
    const now = options.now;
    const since = new Date(now.getTime() - options.days * 86_400_000).toISOString();
    const [messages, sources, tasks] = await Promise.all([
      this.collections.chatMessages.findAll(org, { role: 'user' }),
      this.collections.sources.findAll(org),
      this.collections.tasks.findAll(org),
    ]);
    const questions: Question[] = messages
      .filter((message) => message.created_at >= since)
      .map((message) => ({ text: message.content, conversation_id: message.conversation_id, at: message.created_at }));
    const skipped: Recommendations['skipped'] = [];
    let clusters: ClusterPattern[] = [];
    if (this.graph === null) skipped.push({ signal: 'graph_patterns', reason: 'no graph store is configured' });
    else {
      const realms = (await this.collections.realms.findAll(org)).map((realm) => realm.name);
      clusters = clusterPatterns(await realmLabelCounts(this.graph, org, realms));
    }
    const taken = new Set(tasks.map((task) => task.name));
    const items = [
      ...recurringQuestions(questions, tasks, sources, options.minOccurrences),
      ...fromConnectorState(sources, tasks),
      ...fromGraph(clusters, sources),
    ]
      .filter((item) => !taken.has(item.task.name))
      .slice(0, options.limit);
    return { items, window_days: options.days, skipped };
  }
}

/** sources of these kinds that no task pins */
function unpinned(sources: readonly SourceRef[], tasks: readonly TaskRef[], kinds: readonly string[], triggerKind?: string): SourceRef[] {
  const pinned = new Set(
    tasks.filter((task) => triggerKind === undefined || task.trigger_kind === triggerKind).flatMap((task) => task.enabled_source_ids ?? []),
  );
  return sources.filter((source) => kinds.includes(source.connector) && !pinned.has(source.id));
}

const chatSources = (sources: readonly SourceRef[]): SourceRef[] => sources.filter((source) => CHAT.includes(source.connector));
const postStep = (chat: readonly SourceRef[]): string =>
  chat.length > 0 ? " Post it to the team's chat channel." : ' Reply with it (add a chat source to have it posted).';

function recurringQuestions(
  questions: readonly Question[],
  tasks: readonly TaskRef[],
  sources: readonly SourceRef[],
  minOccurrences: number,
): Recommendation[] {
  const instructions = tasks.map((task) => {
    const instruction = task.input_template?.['instruction'];
    return typeof instruction === 'string' ? instruction.toLowerCase() : '';
  });
  const chat = chatSources(sources);
  return clusterQuestions(questions)
    .map((cluster) => ({ cluster, conversations: new Set(cluster.questions.map((question) => question.conversation_id)).size }))
    .filter(({ cluster, conversations }) => cluster.questions.length >= minOccurrences && conversations >= 2)
    .sort((a, b) => b.cluster.questions.length - a.cluster.questions.length)
    .flatMap(({ cluster, conversations }): Recommendation[] => {
      const latest = [...cluster.questions].reverse();
      const examples = [...new Set(latest.map((question) => question.text.trim()))].slice(0, EXAMPLES);
      const question = examples[0] ?? '';
      // a task already asking it: nothing to suggest
      if (instructions.some((instruction) => instruction.includes(question.toLowerCase()))) return [];
      const terms = [...cluster.terms].sort();
      return [
        {
          id: stableId('recurring_question', terms.join(' ')),
          kind: 'recurring_question',
          title: `Answer "${truncate(question, 80)}" every weekday morning`,
          reason: `asked ${cluster.questions.length} times in ${conversations} conversations`,
          evidence: {
            count: cluster.questions.length,
            conversations,
            examples,
            terms,
            first_asked_at: cluster.questions[0]?.at ?? null,
            last_asked_at: cluster.questions.at(-1)?.at ?? null,
          },
          task: {
            name: truncate(`Recurring: ${question}`, 100),
            trigger: { kind: 'schedule', cron: WEEKDAY_MORNING_CRON },
            input_template: {
              instruction: `The team asks this often: "${question}". Answer it with current data from the connected systems, briefly.${postStep(chat)}`,
            },
            approval_defaults: { write: 'ask' },
            enabled: true,
          },
        },
      ];
    });
}

function fromConnectorState(sources: readonly SourceRef[], tasks: readonly TaskRef[]): Recommendation[] {
  const out: Recommendation[] = [];
  const chat = chatSources(sources);
  const summarySources = unpinned(sources, tasks, [...CODE_HOST, ...BUILD_SERVER, ...DEPLOY_PLATFORM], 'schedule');
  if (summarySources.length > 0) {
    const ids = [...summarySources, ...chat].map((source) => source.id);
    out.push({
      id: stableId(
        'weekday_summary',
        summarySources
          .map((source) => source.id)
          .sort()
          .join(','),
      ),
      kind: 'weekday_summary',
      title: 'Weekday-morning engineering summary',
      reason: `${summarySources.length} code-host, build or deployment source(s) that no scheduled task uses`,
      evidence: { sources: summarySources.map(({ id, name, connector }) => ({ id, name, connector })) },
      task: {
        name: 'Weekday morning summary',
        trigger: { kind: 'schedule', cron: WEEKDAY_MORNING_CRON },
        input_template: {
          instruction:
            'Collect the pull requests with no activity for 3 days or more, the builds that failed since yesterday morning and the ' +
            `latest production deployment, then write a short summary with links.${postStep(chat)}`,
        },
        enabled_source_ids: ids,
        approval_defaults: { write: 'ask' },
        enabled: true,
      },
    });
  }
  const codeHosts = sources.filter((source) => CODE_HOST.includes(source.connector)).map((source) => source.id);
  for (const source of unpinned(sources, tasks, [...BUILD_SERVER, ...DEPLOY_PLATFORM], 'webhook')) {
    const build = BUILD_SERVER.includes(source.connector);
    const what = build ? 'build' : 'deployment';
    out.push({
      id: stableId('failure_diagnosis', source.id),
      kind: 'failure_diagnosis',
      title: `Diagnose failed ${what}s of ${source.name}`,
      reason: `${source.name} (${source.connector}) can post failures to a webhook task, and none listens to it`,
      evidence: { source: { id: source.id, name: source.name, connector: source.connector } },
      task: {
        name: truncate(`Diagnose ${what} failures: ${source.name}`, 100),
        trigger: { kind: 'webhook' },
        input_template: {
          instruction: build
            ? 'Build {{trigger.body.name}} #{{trigger.body.build.number}} ended {{trigger.body.build.status}} ({{trigger.body.build.full_url}}), ' +
              'commit {{trigger.body.build.scm.commit}} on {{trigger.body.build.scm.branch}}. Find the commit, its author and the last ' +
              `healthy build, then write a one-paragraph hypothesis of the cause.${postStep(chat)}`
            : 'Deployment {{trigger.body.payload.deployment.id}} of {{trigger.body.payload.name}} to {{trigger.body.payload.target}} failed ' +
              '({{trigger.body.payload.links.deployment}}), commit {{trigger.body.payload.deployment.meta.githubCommitSha}} by ' +
              '{{trigger.body.payload.deployment.meta.githubCommitAuthorLogin}}. Find what changed since the last healthy deployment, ' +
              `then write a one-paragraph hypothesis of the cause.${postStep(chat)}`,
        },
        enabled_source_ids: [source.id, ...codeHosts, ...chat.map((chatSource) => chatSource.id)],
        approval_defaults: { write: 'ask' },
        enabled: true,
      },
      try_with_sample: build ? 'jenkins.build_failed' : 'vercel.deployment_error',
    });
  }
  return out;
}

function fromGraph(clusters: readonly ClusterPattern[], sources: readonly SourceRef[]): Recommendation[] {
  const chat = chatSources(sources);
  return clusters.map(({ realm, counts }) => ({
    id: stableId('cluster_health', realm),
    kind: 'cluster_health',
    title: `Weekday-morning cluster health check (${realm})`,
    reason: `the context graph of realm ${realm} holds ${counts['Pod'] ?? 0} pods and ${counts['Service'] ?? 0} services`,
    evidence: { realm, nodes: counts },
    task: {
      name: truncate(`Cluster health check: ${realm}`, 100),
      realm,
      trigger: { kind: 'schedule', cron: WEEKDAY_MORNING_CRON },
      input_template: {
        instruction:
          'Check the cluster workloads the context graph knows: pods that are not running or restart repeatedly, and services ' +
          `with no ready pods. For each problem give the namespace, what is wrong and the likely cause.${postStep(chat)}`,
      },
      approval_defaults: { write: 'ask' },
      enabled: true,
    },
  }));
}

/**
 * Voice sessions (feature `voice`): records, client tokens, the actor kind
 * and the registry of connected sessions.
 *
 * `create` stores the session and returns a client token: random, shown once,
 * stored as its SHA-256, valid for that one session until `token_expires_at`
 * and for one connection (a session whose client has connected cannot be
 * connected again). `authorize` checks it (constant-time on the hashes) and
 * prepares what the connection needs (endpoint, tools, cost cap); `connect`
 * starts the actor and the provider connection once the socket is open.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { voiceSessionMachine, type VoiceEndReason } from '../../actors/voice-session.machine.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { dayOf, isoAt, type RuntimeClock } from '../../runtime/clock.js';
import { constantTimeEqual, sha256Hex } from '../../runtime/crypto.js';
import { ServiceError } from '../../runtime/errors.js';
import type { FileStore } from '../../runtime/files/store.js';
import { LlmError, resolveLlmEndpoint, type LlmEndpoint } from '../../runtime/llm/index.js';
import type { EgressGuard } from '../../runtime/net/egress.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { KindHandle, Supervisor } from '../../runtime/supervisor.js';
import { createCatalog } from '../../runtime/tools/catalog.js';
import type { PluginRegistry } from '../../runtime/tools/registry.js';
import type { ToolCallGate } from '../../runtime/tools/tool-gate.js';
import { openRealtime } from '../../runtime/voice/realtime.js';
import type { Collections } from '../collections.js';
import { SETTINGS_DEFAULTS } from '../organizations.js';
import type { RealmService } from '../realms/service.js';
import type { SourceDirectory } from '../sources/directory.js';
import type { VoiceSessionDoc } from './documents.js';
import { LiveVoiceSession, type ApprovalAnswer, type ClientChannel, type LiveSessionSetup } from './live-session.js';
import type { ActivityRecorder } from '../activity/record.js';
import { voiceApprovalObserver } from './approval-reports.js';
import type { VoiceApprovalObserver } from './session-tools.js';

const VOICE_ACTOR_KIND = 'voice_session';
/** how long a client token may wait for its connection */
const CLIENT_TOKEN_TTL_SECONDS = 600;
const DEFAULT_INSTRUCTIONS = 'You are a helpful voice assistant. Answer briefly, in plain spoken language.';

/** what a caller chooses of a session: the record's own fields, plus the agent and realm it names */
export type CreateVoiceSession = Pick<
  VoiceSessionDoc,
  'voice' | 'input_audio_format' | 'output_audio_format' | 'turn_detection' | 'max_duration_s' | 'idle_timeout_s' | 'record_audio'
> & {
  readonly agent?: string | undefined;
  readonly realm?: string | undefined;
  readonly instructions?: string | undefined;
};

export interface VoiceServiceDeps {
  readonly collections: Collections;
  readonly config: ServiceConfig;
  readonly supervisor: Supervisor;
  readonly egress: EgressGuard;
  readonly files: FileStore;
  readonly plugins: PluginRegistry;
  readonly sources: SourceDirectory;
  readonly realms: RealmService;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  /** the policy gate agent runs use: voice tool calls are decided, logged and audited by it too */
  readonly policies: ToolCallGate;
  /** approvals asked and decided go to its feed and audit log */
  readonly activity: ActivityRecorder;
}

/** what an authorized connection needs, prepared before the upgrade */
export interface VoiceTicket {
  readonly orgId: OrgId;
  readonly doc: VoiceSessionDoc;
  readonly endpoint: LlmEndpoint;
  readonly setup: LiveSessionSetup;
}

export class VoiceService {
  private readonly live = new Map<string, LiveVoiceSession>();
  /** sessions between `authorize` and `connect` (or a refused upgrade) */
  private readonly connecting = new Set<string>();
  private readonly actors: KindHandle<typeof voiceSessionMachine>;
  private readonly approvals: VoiceApprovalObserver;

  constructor(private readonly deps: VoiceServiceDeps) {
    this.approvals = voiceApprovalObserver(deps.activity);
    const logic = voiceSessionMachine.provide({
      actions: {
        announce: ({ context }, params) => this.live.get(context.sessionId)?.announce(params.state),
        bargeIn: ({ context }) => this.live.get(context.sessionId)?.bargeIn(),
        finish: ({ context }, params) => this.live.get(context.sessionId)?.finish(params.reason),
      },
    });
    this.actors = deps.supervisor.registerKind({
      kind: VOICE_ACTOR_KIND,
      logic,
      // a live call cannot be resumed from its input: a failure ends it
      policy: { onFailure: 'fail' },
      shutdownEvent: { type: 'END', reason: 'shutdown' },
      onFailed: (entry) => this.live.get(entry.id)?.finish('provider_error'),
      drain: async () => {
        await Promise.all([...this.live.values()].map((session) => session.settled()));
      },
    });
  }

  get listing(): Pick<Collections['voiceSessions'], 'list' | 'revision'> {
    return this.deps.collections.voiceSessions;
  }

  /** sessions a previous process left live: ended as `interrupted`. Call once at start. */
  async recover(): Promise<number> {
    const { voiceSessions } = this.deps.collections;
    const stale = await voiceSessions.findAcrossOrgs({ state: { in: ['connecting', 'listening', 'thinking', 'speaking'] } }, 10_000);
    for (const doc of stale) {
      await voiceSessions.update(doc.org_id, doc.id, { state: 'ended', end_reason: 'interrupted', ended_at: isoAt(this.deps.clock.now()) });
    }
    return stale.length;
  }

  async create(auth: AuthContext, input: CreateVoiceSession): Promise<{ doc: VoiceSessionDoc; token: string }> {
    const { collections, config, clock } = this.deps;
    const org = auth.orgId;
    let realm = 'default';
    if (input.realm !== undefined) {
      try {
        realm = (await this.deps.realms.get(org, input.realm)).name;
      } catch {
        throw new ServiceError('validation_error', `realm ${input.realm} not found`, { issues: [{ path: 'realm', message: 'no such realm' }] });
      }
    }
    let instructions = input.instructions;
    let agentId: string | null = null;
    if (input.agent !== undefined) {
      const agent = (await collections.agents.get(org, input.agent)) ?? (await collections.agents.findOne(org, { name: input.agent }));
      if (agent === null)
        throw new ServiceError('validation_error', `agent ${input.agent} not found`, { issues: [{ path: 'agent', message: 'no such agent' }] });
      agentId = agent.id;
      const prompt = agent.config['system_prompt'];
      instructions ??= typeof prompt === 'string' && prompt.trim() !== '' ? prompt : undefined;
    }
    const cap = await this.costCap(org);
    if (cap !== null && cap.spentUsd >= cap.capUsd) {
      throw new ServiceError('cost_cap_exceeded', "the organization's daily LLM spend is reached (CHAT_COST_CAP_USD_PER_DAY)", { cap_usd: cap.capUsd });
    }
    const token = `vst_${randomBytes(32).toString('base64url')}`;
    const now = clock.now();
    const doc = await collections.voiceSessions.insert(org, {
      agent_id: agentId,
      realm,
      instructions: instructions ?? DEFAULT_INSTRUCTIONS,
      voice: input.voice,
      input_audio_format: input.input_audio_format,
      output_audio_format: input.output_audio_format,
      turn_detection: input.turn_detection,
      max_duration_s: input.max_duration_s,
      idle_timeout_s: input.idle_timeout_s,
      record_audio: input.record_audio,
      model: config.voiceModel,
      state: 'created',
      end_reason: null,
      token_hash: sha256Hex(token),
      token_expires_at: isoAt(now + CLIENT_TOKEN_TTL_SECONDS * 1000),
      created_by: auth.userId,
      started_at: null,
      ended_at: null,
      day: dayOf(now),
      transcripts: [],
      tool_calls: [],
      metrics: { time_to_first_audio_ms: null, turn_latency_ms: [], input_audio_bytes: 0, output_audio_bytes: 0, barge_ins: 0 },
      usage: { input_tokens: 0, output_tokens: 0 },
      cost_usd: 0,
      audio_files: [],
    });
    return { doc, token };
  }

  async get(org: OrgId, id: string): Promise<VoiceSessionDoc> {
    const doc = await this.deps.collections.voiceSessions.get(org, id);
    if (doc === null) throw new ServiceError('not_found', `voice session ${id} not found`);
    return doc;
  }

  /** ends a session: a live one through its actor (its record is written as it ends), a waiting one at once */
  async end(org: OrgId, id: string): Promise<VoiceSessionDoc> {
    const doc = await this.get(org, id);
    const live = this.live.get(id);
    if (live !== undefined && live.orgId === org) {
      this.actors.send(id, { type: 'END', reason: 'ended_by_api' });
      await live.settled();
      return this.get(org, id);
    }
    if (doc.state === 'ended') return doc;
    const ended = await this.deps.collections.voiceSessions.update(org, id, {
      state: 'ended',
      end_reason: 'ended_by_api',
      ended_at: isoAt(this.deps.clock.now()),
    });
    return ended ?? doc;
  }

  /** answers an approval of a live session; 404 for an unknown one, 409 once decided */
  async decide(auth: AuthContext, id: string, approvalId: string, approved: boolean): Promise<VoiceSessionDoc> {
    const doc = await this.get(auth.orgId, id);
    const live = this.live.get(id);
    let answer: ApprovalAnswer;
    if (live !== undefined && live.orgId === auth.orgId) answer = live.decide(approvalId, approved, auth.userId, 'api');
    else answer = doc.tool_calls.some((call) => call.approval?.id === approvalId) ? 'decided' : 'not_found';
    if (answer === 'not_found') throw new ServiceError('not_found', `approval ${approvalId} not found`);
    if (answer === 'decided') throw new ServiceError('conflict', `approval ${approvalId} is already decided`);
    await live?.settled();
    return this.get(auth.orgId, id);
  }

  /**
   * Checks a client token for a session and prepares the connection.
   * @throws ServiceError `unauthorized` (unknown, wrong or expired token), `conflict` (already
   * connected or ended), `llm_unconfigured`
   */
  async authorize(sessionId: string, token: string): Promise<VoiceTicket> {
    const hash = sha256Hex(token);
    const [found] = await this.deps.collections.voiceSessions.findAcrossOrgs({ token_hash: hash }, 1);
    if (found === undefined || found.id !== sessionId || !constantTimeEqual(Buffer.from(found.token_hash, 'hex'), Buffer.from(hash, 'hex'))) {
      throw new ServiceError('unauthorized', 'the voice session token is not valid for this session');
    }
    if (Date.parse(found.token_expires_at) <= this.deps.clock.now()) throw new ServiceError('unauthorized', 'the voice session token has expired');
    if (found.state !== 'created' || this.live.has(sessionId) || this.connecting.has(sessionId)) {
      throw new ServiceError('conflict', 'this voice session was already connected; start a new one');
    }
    const { org_id: orgId, ...doc } = found;
    this.connecting.add(sessionId);
    try {
      const settings = (await this.deps.collections.settings.findOne(orgId, { singleton: true })) ?? SETTINGS_DEFAULTS;
      const endpoint = resolveLlmEndpoint(orgId, settings, this.deps.config);
      const sources = await this.deps.sources.catalogSources(orgId, null);
      const { policies } = this.deps;
      // the same outermost policy interceptor as a run's catalog, for any call no precheck decided
      const interceptors = policies.enabled ? [policies.interceptor({ user: doc.created_by })] : [];
      const catalog = createCatalog(this.deps.plugins, { sources, interceptors });
      return { orgId, doc, endpoint, setup: { catalog, costCap: await this.costCap(orgId) } };
    } catch (error) {
      this.connecting.delete(sessionId);
      if (error instanceof LlmError) throw new ServiceError('llm_unconfigured', error.message);
      throw error;
    }
  }

  /** the upgrade did not happen (the client went away): the session may be connected again */
  abandon(ticket: VoiceTicket): void {
    this.connecting.delete(ticket.doc.id);
  }

  /** the socket is open: starts the actor and the provider connection; returns the session the socket talks to */
  connect(ticket: VoiceTicket, client: ClientChannel): LiveVoiceSession {
    const { orgId, doc } = ticket;
    this.connecting.delete(doc.id);
    const { config, clock, logger } = this.deps;
    const session = new LiveVoiceSession(
      {
        collections: this.deps.collections,
        files: this.deps.files,
        logger,
        now: () => clock.now(),
        prices: config.llmPrices,
        policies: this.deps.policies.enabled ? this.deps.policies : null,
        approvals: this.approvals,
        signal: (event) => this.actors.send(doc.id, event),
        released: () => {
          if (this.live.get(doc.id) === session) this.live.delete(doc.id);
        },
      },
      orgId,
      doc,
      client,
      ticket.setup,
    );
    this.live.set(doc.id, session);
    void this.deps.collections.voiceSessions
      .update(orgId, doc.id, { started_at: isoAt(clock.now()) })
      .catch((error: unknown) => logger.error({ err: error, session: doc.id }, 'voice session record not written'));
    try {
      this.actors.spawn({ id: doc.id, orgId, input: { orgId, sessionId: doc.id, idleMs: doc.idle_timeout_s * 1000, maxMs: doc.max_duration_s * 1000 } });
    } catch (error) {
      this.live.delete(doc.id);
      client.sendJson({ type: 'error', code: 'service_unavailable', message: 'the server is shutting down' });
      client.close(1001, 'shutting down');
      logger.warn({ err: error, session: doc.id }, 'voice session not started');
      return session;
    }
    try {
      session.attachProvider(
        openRealtime(
          { endpoint: ticket.endpoint, model: doc.model, caFile: config.voiceProviderCaFile, egress: this.deps.egress },
          {
            onOpen: () => session.providerOpened(),
            onEvent: (event) => session.providerEvent(event),
            onError: (message) => session.providerFailed(message),
            onClose: () => session.providerClosed(),
          },
        ),
      );
    } catch (error) {
      session.providerFailed(error instanceof Error ? error.message : 'the provider connection could not be opened');
    }
    return session;
  }

  /** ends a live session (the socket layer: `end` frame, disconnect) */
  endLive(sessionId: string, reason: VoiceEndReason): void {
    this.actors.send(sessionId, { type: 'END', reason });
  }

  /** The organization's daily cap and what chat runs and voice sessions spent under it today (UTC, runtime clock). */
  private async costCap(org: OrgId): Promise<{ capUsd: number; spentUsd: number } | null> {
    const capUsd = this.deps.config.chatCostCapUsdPerDay;
    if (capUsd === null) return null;
    const day = dayOf(this.deps.clock.now());
    const runs = await this.deps.collections.agentRuns.findAll(org, { day, kind: 'chat' });
    const sessions = await this.deps.collections.voiceSessions.findAll(org, { day });
    const spentUsd = runs.reduce((sum, run) => sum + run.cost_usd, 0) + sessions.reduce((sum, session) => sum + session.cost_usd, 0);
    return { capUsd, spentUsd };
  }
}

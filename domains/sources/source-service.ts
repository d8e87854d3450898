/**
 * The sources resource: configured connections to external systems. Configs
 * are sealed at rest and masked on read; validation asks the connector
 * (bad credentials fail here); syncs run as jobs with a history, on demand
 * or on a cron schedule, one at a time per source; runs get the sources they
 * may see with configs decrypted (SourceDirectory).
 */
import type { Logger } from 'pino';
import { ToolError, type SyncReport } from '../../connectors/contract.js';
import type { CatalogSource } from '../../runtime/tools/catalog.js';
import { validateCopy } from '../../runtime/tools/json-schema.js';
import type { LoadedPlugin, PluginRegistry } from '../../runtime/tools/registry.js';
import type { Collections } from '../collections.js';
import { ServiceError } from '../../runtime/errors.js';
import type { EgressGuard } from '../../runtime/net/egress.js';
import type { PlatformEvents } from '../../runtime/events.js';
import type { GraphStore } from '../../runtime/graph/store.js';
import { newId, nowIso } from '../../runtime/ids.js';
import { DEFAULT_REALM } from '../../runtime/graph/names.js';
import { assertReferences } from '../references.js';
import { asOrgId, type ListOptions, type OrgId, type Page } from '../../runtime/store/types.js';
import { ConfigVault, restoreMasked } from './config-secrets.js';
import { connectorFailure, isUnexpected, validationFailed } from './connector-failure.js';
import type { SourceDirectory } from './directory.js';
import { DYNAMIC_TOOLS_TTL_MS, DynamicToolCache } from './dynamic-tools.js';
import { SyncSchedule } from './sync-schedule.js';
import { checkedConfig, checkedSchedule, checkSecretsFollowEndpoint, configIssues, invalid } from './config-rules.js';
import type { SourceDoc, SourceError, SourceSyncJobDoc, SourceVisibility } from './types.js';
import { systemClock, type RuntimeClock } from '../../runtime/clock.js';

/** a connector that does not answer validation in time fails it */
const VALIDATE_TIMEOUT_MS = 30_000;

export interface SourceInput {
  readonly name: string;
  readonly connector: string;
  readonly realm?: string | undefined;
  readonly config: Record<string, unknown>;
  readonly schedule?: string | undefined;
  readonly visibility?: SourceVisibility | undefined;
}

export interface SourcePatch {
  readonly name?: string | undefined;
  readonly realm?: string | undefined;
  readonly config?: Record<string, unknown> | undefined;
  readonly schedule?: string | undefined;
  readonly visibility?: SourceVisibility | undefined;
}

export interface SourceServiceOptions {
  readonly collections: Collections;
  readonly plugins: PluginRegistry;
  /** SOURCE_CONFIG_KEY, or JWT_SECRET */
  readonly keyRoot: Uint8Array;
  readonly events: PlatformEvents;
  /** the context graph syncs write to; null until a graph store is wired */
  readonly graph: () => GraphStore | null;
  readonly logger: Logger;
  /** the egress guard: endpoint fields naming a refused literal address are refused when saved */
  readonly egress: Pick<EgressGuard, 'checkUrl'>;
  /** the runtime clock: how long listed tools are reused */
  readonly clock?: Pick<RuntimeClock, 'now'>;
}

interface RunningSync {
  readonly jobId: string;
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

/** what a sync the service stopped in the middle of ends with */
const INTERRUPTED: SourceError = { code: 'interrupted', message: 'the service stopped during the sync' };

export class SourceService implements SourceDirectory {
  private readonly collections: Collections;
  /** the loaded connector plugins (and those refused at start) */
  readonly registry: PluginRegistry;
  private readonly vault: ConfigVault;
  private readonly events: PlatformEvents;
  private readonly graph: () => GraphStore | null;
  private readonly logger: Logger;
  private readonly egress: Pick<EgressGuard, 'checkUrl'>;
  private readonly dynamicTools: DynamicToolCache;
  private readonly schedule: SyncSchedule;
  /** source id -> its running sync (one at a time per source) */
  private readonly running = new Map<string, RunningSync>();
  private stopped = false;

  constructor(options: SourceServiceOptions) {
    this.collections = options.collections;
    this.registry = options.plugins;
    this.vault = new ConfigVault(options.keyRoot);
    this.events = options.events;
    this.graph = options.graph;
    this.logger = options.logger;
    this.egress = options.egress;
    this.dynamicTools = new DynamicToolCache(options.logger, DYNAMIC_TOOLS_TTL_MS, () => (options.clock ?? systemClock).now());
    this.schedule = new SyncSchedule((orgId, sourceId) => this.scheduledSync(orgId, sourceId));
  }

  /**
   * At start: syncs a previous process left running end as failed
   * (`interrupted`), and every source with a schedule is armed.
   */
  async start(): Promise<void> {
    for (const job of await this.collections.sourceSyncJobs.findAcrossOrgs({ status: 'running' }, 10_000)) {
      await this.finishJob(job.org_id, job.id, { status: 'failed', error: INTERRUPTED });
      const source = await this.collections.sources.get(job.org_id, job.source_id);
      if (source?.status === 'syncing') await this.collections.sources.update(job.org_id, source.id, { status: 'failed', last_error: INTERRUPTED });
    }
    for (const source of await this.collections.sources.findAcrossOrgs({}, 100_000)) {
      if (source.schedule !== '') this.schedule.set(source.org_id, source.id, source.schedule);
    }
  }

  /** Stops the schedule and aborts running syncs (they end as failed/`interrupted`). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.schedule.stop();
    const running = [...this.running.values()];
    for (const sync of running) sync.controller.abort(new ToolError('interrupted', 'the service stopped during the sync'));
    await Promise.allSettled(running.map((sync) => sync.done));
  }

  /** how many sources have an armed schedule (for health and tests) */
  get scheduledSources(): number {
    return this.schedule.size;
  }

  pluginOf(kind: string): LoadedPlugin {
    const plugin = this.registry.plugin(kind);
    if (!plugin || plugin.sourceless) {
      const kinds = this.registry.plugins.filter((candidate) => !candidate.sourceless).map((candidate) => candidate.kind);
      throw invalid('connector', `no connector "${kind}" (loaded: ${kinds.join(', ') || 'none'})`);
    }
    return plugin;
  }

  /** the decrypted config of a stored source */
  configOf(source: SourceDoc, org: OrgId): Record<string, unknown> {
    return this.vault.unseal(org, source.id, source.config_sealed);
  }

  async create(org: OrgId, userId: string, input: SourceInput): Promise<SourceDoc> {
    const plugin = this.pluginOf(input.connector);
    const realm = await this.checkedRealm(org, input.realm ?? DEFAULT_REALM);
    const config = checkedConfig(this.egress, plugin, input.config);
    const schedule = checkedSchedule(plugin, input.schedule ?? '');
    const id = newId('src');
    const source = await this.collections.sources.insert(org, {
      id,
      name: input.name,
      connector: plugin.kind,
      realm,
      config_sealed: this.vault.seal(org, id, config),
      schedule,
      visibility: input.visibility ?? 'organization',
      status: 'pending',
      last_error: null,
      last_validated_at: null,
      last_synced_at: null,
      created_by: userId,
    });
    this.schedule.set(org, source.id, schedule);
    return source;
  }

  list(org: OrgId, options: ListOptions): Promise<Page<SourceDoc>> {
    return this.collections.sources.list(org, options);
  }

  /** a source's sync jobs, oldest first */
  jobs(org: OrgId, sourceId: string, options: ListOptions): Promise<Page<SourceSyncJobDoc>> {
    return this.collections.sourceSyncJobs.list(org, { ...options, filter: { ...options.filter, source_id: sourceId } });
  }

  async get(org: OrgId, id: string): Promise<SourceDoc> {
    const source = await this.collections.sources.get(org, id);
    if (!source) throw new ServiceError('not_found', `source ${id} not found`);
    return source;
  }

  /** A changed config or connector-facing field sends the source back to `pending`. */
  async update(org: OrgId, id: string, patch: SourcePatch): Promise<SourceDoc> {
    const source = await this.get(org, id);
    const plugin = this.pluginOf(source.connector);
    const changes: { -readonly [K in keyof SourceDoc]?: SourceDoc[K] } = {};
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.visibility !== undefined) changes.visibility = patch.visibility;
    if (patch.realm !== undefined) changes.realm = await this.checkedRealm(org, patch.realm);
    if (patch.schedule !== undefined) changes.schedule = checkedSchedule(plugin, patch.schedule);
    if (patch.config !== undefined) {
      const stored = this.configOf(source, org);
      checkSecretsFollowEndpoint(plugin, patch.config, stored);
      const config = checkedConfig(this.egress, plugin, restoreMasked(patch.config, stored) as Record<string, unknown>);
      changes.config_sealed = this.vault.seal(org, source.id, config);
      if (JSON.stringify(config) !== JSON.stringify(stored) && source.status !== 'syncing') {
        changes.status = 'pending';
        changes.last_error = null;
      }
    }
    const updated = await this.collections.sources.update(org, source.id, changes);
    if (!updated) throw new ServiceError('not_found', `source ${id} not found`);
    this.forget(source);
    if (patch.schedule !== undefined) this.schedule.set(org, source.id, updated.schedule);
    return updated;
  }

  async remove(org: OrgId, id: string): Promise<void> {
    const source = await this.get(org, id);
    const running = this.running.get(source.id);
    if (running) {
      throw new ServiceError('conflict', `source ${source.name} is syncing; wait for job ${running.jobId} to end, then delete`, { job_id: running.jobId });
    }
    this.schedule.remove(source.id);
    await this.collections.sourceSyncJobs.deleteWhere(org, { source_id: source.id });
    await this.collections.sources.delete(org, source.id);
    this.forget(source);
  }

  /** a changed or deleted source: its listed tools are asked again, and its connector lets go of what it holds (a pool) */
  private forget(source: SourceDoc): void {
    this.dynamicTools.forget(source.id);
    this.registry
      .plugin(source.connector)
      ?.plugin.releaseSource?.(source.id)
      .catch((error: unknown) => this.logger.warn({ err: error, source_id: source.id }, 'releasing a source failed'));
  }

  /**
   * Asks the connector to check the config against the real system. Passing
   * lists the source as `synced`; failing marks it `failed` and throws 422
   * `source_validation_failed` with the connector's details (e.g. missing scopes).
   */
  async test(org: OrgId, id: string): Promise<SourceDoc> {
    const source = await this.get(org, id);
    const plugin = this.pluginOf(source.connector);
    const config = this.usableConfig(plugin, source, org);
    let failure: SourceError | null = null;
    try {
      const result = await plugin.plugin.validate(config, AbortSignal.timeout(VALIDATE_TIMEOUT_MS), this.registry.net);
      if (!result.ok) {
        failure = {
          code: 'source_validation_failed',
          message: result.message ?? `${source.connector} refused the configuration`,
          details: result.details ?? {},
        };
      }
    } catch (error) {
      // a connector that throws (unreachable host, timeout) fails validation the same way, with the reason
      const { code, message, details } = this.failureOf(error, source);
      failure = { code: 'source_validation_failed', message: `${source.connector} validation failed: ${message}`, details: { reason: code, ...details } };
    }
    // the guard refused the address: not the upstream's verdict, so its own code (422 egress_refused, details.address_class)
    if (failure?.details?.['reason'] === 'egress_refused') failure = { ...failure, code: 'egress_refused' };
    const now = nowIso();
    const status = failure ? 'failed' : source.status === 'syncing' ? 'syncing' : 'synced';
    const updated = await this.collections.sources.update(org, source.id, { status, last_error: failure, last_validated_at: now });
    if (failure)
      throw new ServiceError(failure.code === 'egress_refused' ? 'egress_refused' : 'source_validation_failed', failure.message, {
        source_id: source.id,
        ...failure.details,
      });
    return updated ?? source;
  }

  /**
   * Starts a sync job and returns it at once (status `running`); the job
   * record follows its progress. 409 when one is already running.
   */
  async startSync(org: OrgId, id: string, trigger: 'manual' | 'schedule', userId: string | null): Promise<SourceSyncJobDoc> {
    const source = await this.get(org, id);
    const plugin = this.pluginOf(source.connector);
    if (!plugin.plugin.sync) {
      throw new ServiceError('conflict', `connector ${source.connector} has no sync (its tools are live calls only)`, { reason: 'sync_unsupported' });
    }
    if (this.stopped) throw new ServiceError('service_unavailable', 'the service is shutting down; retry shortly');
    const current = this.running.get(source.id);
    if (current) throw new ServiceError('conflict', `a sync of source ${source.name} is already running`, { job_id: current.jobId });
    const config = this.usableConfig(plugin, source, org);
    const controller = new AbortController();
    // the slot is taken before any await, so two requests cannot both start
    const slot: { jobId: string; controller: AbortController; done: Promise<void> } = { jobId: '', controller, done: Promise.resolve() };
    this.running.set(source.id, slot);
    let job: SourceSyncJobDoc;
    try {
      job = await this.collections.sourceSyncJobs.insert(org, {
        source_id: source.id,
        status: 'running',
        trigger,
        progress: 0,
        message: null,
        nodes: 0,
        relationships: 0,
        details: null,
        error: null,
        started_at: nowIso(),
        finished_at: null,
        created_by: userId,
      });
      await this.collections.sources.update(org, source.id, { status: 'syncing' });
    } catch (error) {
      this.running.delete(source.id);
      throw error;
    }
    slot.jobId = job.id;
    slot.done = this.runSync(org, source, plugin, config, job, controller.signal).finally(() => this.running.delete(source.id));
    return job;
  }

  /** resolves when the source's running sync (if any) has ended */
  async settled(sourceId: string): Promise<void> {
    await this.running.get(sourceId)?.done;
  }

  async job(org: OrgId, sourceId: string, jobId: string): Promise<SourceSyncJobDoc> {
    const job = await this.collections.sourceSyncJobs.get(org, jobId);
    if (!job || job.source_id !== sourceId) throw new ServiceError('not_found', `sync job ${jobId} not found`);
    return job;
  }

  /** SourceDirectory: the sources a run may see, configs decrypted, with their listed tools where the connector lists them. */
  async catalogSources(orgId: string, ids: readonly string[] | null): Promise<CatalogSource[]> {
    const org = asOrgId(orgId);
    const docs =
      ids === null
        ? (await this.collections.sources.findAll(org)).filter((source) => source.visibility === 'organization')
        : ids.length === 0
          ? []
          : await this.collections.sources.findAll(org, { id: { in: [...ids] } });
    const visible: CatalogSource[] = [];
    for (const source of docs) {
      const plugin = this.registry.plugin(source.connector);
      if (!plugin || validationFailed(source)) continue;
      let config: Record<string, unknown>;
      try {
        config = this.configOf(source, org);
      } catch (error) {
        this.logger.error({ source_id: source.id, err: error }, 'a source config does not decrypt (was SOURCE_CONFIG_KEY changed?)');
        continue;
      }
      const entry: CatalogSource = { id: source.id, kind: source.connector, name: source.name, config };
      if (plugin.plugin.listTools) {
        const checked = validateCopy(plugin.validateConfig, config);
        const tools = checked.ok ? await this.dynamicTools.tools(plugin, source, checked.value, this.registry.net) : [];
        visible.push({ ...entry, tools });
      } else {
        visible.push(entry);
      }
    }
    return visible;
  }

  private async runSync(
    org: OrgId,
    source: SourceDoc,
    plugin: LoadedPlugin,
    config: Record<string, unknown>,
    job: SourceSyncJobDoc,
    signal: AbortSignal,
  ): Promise<void> {
    // progress writes are chained so they land in order and before the final write
    let writes = Promise.resolve();
    const progress = (fraction: number, message?: string): void => {
      const bounded = Math.min(Math.max(Number.isFinite(fraction) ? fraction : 0, 0), 1);
      writes = writes
        .then(() => this.collections.sourceSyncJobs.update(org, job.id, { progress: bounded, message: message ?? null }))
        .then(
          () => undefined,
          (error: unknown) => this.logger.warn({ err: error, job_id: job.id }, 'sync progress not recorded'),
        );
    };
    let report: SyncReport | null = null;
    let failure: SourceError | null = null;
    try {
      if (!plugin.plugin.sync) throw new ToolError('sync_unsupported', `connector ${plugin.kind} has no sync`);
      report = await plugin.plugin.sync({
        orgId: org,
        sourceId: source.id,
        realm: source.realm,
        config,
        signal,
        graph: this.graph()?.sinkFor(org, source.realm) ?? null,
        ...(this.registry.net === undefined ? {} : { net: this.registry.net }),
        progress,
      });
      if (signal.aborted) failure = this.failureOf(signal.reason, source);
    } catch (error) {
      failure = this.failureOf(signal.aborted ? signal.reason : error, source);
    }
    await writes;
    const base = { connector: source.connector, source_id: source.id, source_name: source.name, realm: source.realm, job_id: job.id };
    if (failure) {
      await this.finishJob(org, job.id, { status: 'failed', error: failure });
      await this.collections.sources.update(org, source.id, { status: 'failed', last_error: failure });
      this.events.emit('source.sync_failed', org, { ...base, error: failure });
      this.logger.warn({ ...base, error: failure }, 'source sync failed');
      return;
    }
    const nodes = Number(report?.nodes ?? 0);
    const relationships = Number(report?.relationships ?? 0);
    await this.finishJob(org, job.id, { status: 'succeeded', nodes, relationships, details: report?.details ? { ...report.details } : null, progress: 1 });
    await this.collections.sources.update(org, source.id, { status: 'synced', last_error: null, last_synced_at: nowIso() });
    this.events.emit('source.synced', org, { ...base, nodes, relationships, details: report?.details ?? {} });
  }

  /** the typed failure of a connector call; an unexpected exception is logged in full and shown generically */
  private failureOf(error: unknown, source: SourceDoc): SourceError {
    if (isUnexpected(error)) this.logger.error({ err: error, source_id: source.id, connector: source.connector }, 'connector failed unexpectedly');
    return connectorFailure(error, source.connector);
  }

  private async finishJob(
    org: OrgId,
    jobId: string,
    patch: Partial<Pick<SourceSyncJobDoc, 'status' | 'error' | 'nodes' | 'relationships' | 'details' | 'progress'>>,
  ): Promise<void> {
    await this.collections.sourceSyncJobs.update(org, jobId, { ...patch, finished_at: nowIso() });
  }

  private async scheduledSync(orgId: string, sourceId: string): Promise<void> {
    try {
      await this.startSync(asOrgId(orgId), sourceId, 'schedule', null);
    } catch (error) {
      // a sync still running (or a deleted source) skips this fire; the next one tries again
      this.logger.info({ source_id: sourceId, err: error }, 'scheduled sync skipped');
    }
  }

  /** The stored config validated against the connector's schema (defaults filled); 409 when it no longer fits. */
  private usableConfig(plugin: LoadedPlugin, source: SourceDoc, org: OrgId): Record<string, unknown> {
    const checked = validateCopy(plugin.validateConfig, this.configOf(source, org));
    if (!checked.ok) {
      throw new ServiceError('conflict', `source ${source.name} has a config connector ${plugin.kind} no longer accepts; update it`, {
        issues: configIssues(checked.issues),
      });
    }
    return checked.value;
  }

  private async checkedRealm(org: OrgId, realm: string): Promise<string> {
    if (realm === DEFAULT_REALM) return realm;
    await assertReferences(this.collections, org, { realm: { path: 'realm', value: realm } });
    return realm;
  }
}

/**
 * The actor supervisor: the one place that creates, starts, lists, restarts
 * and stops XState actors. Every actor kind (agent run today; task, channel
 * binding and worker later) plugs in through `registerKind`, so a new kind
 * never changes this module.
 *
 * - Registry: every live actor with its kind, current state, start time and
 *   parent, listable for operators (`GET /runtime/actors`).
 * - Failure policy per kind: an actor that errors (an action throws, an
 *   invoked actor rejects with no `onError`) is restarted from its input up
 *   to `maxRestarts` times, or failed (the kind's `onFailed` hook finalizes
 *   whatever it persisted). Failure is a state the supervisor records, never
 *   an exception that reaches the process.
 * - Shutdown: refuses new actors, sends each kind's safe-point event, waits
 *   (on the injected clock) up to the grace period for actors to finish, then
 *   stops the rest and lets their kind mark them interrupted.
 *
 * The clock is injected (XState's `Clock` plus `now()`): delayed transitions
 * of every actor and the grace period run on it, so tests drive time instead
 * of sleeping.
 *
 * Typed handles: `registerKind` returns the kind's handle, whose `spawn`,
 * `send` and `snapshot` carry the machine's input, event and snapshot types,
 * so callers name no kind string and cast no snapshot.
 */
import { createActor, type AnyActorLogic, type AnyActorRef, type EventFromLogic, type InputFrom, type SnapshotFrom } from 'xstate';
import type { Logger } from 'pino';
import { isoAt, systemClock, type RuntimeClock } from './clock.js';

export type { RuntimeClock } from './clock.js';

type FailurePolicy =
  /** start the actor again from its input, at most `maxRestarts` times in its life */
  | { readonly onFailure: 'restart'; readonly maxRestarts: number }
  /** leave it failed; `onFailed` finalizes it */
  | { readonly onFailure: 'fail' };

export interface ActorKind<TLogic extends AnyActorLogic = AnyActorLogic> {
  /** snake_case, e.g. `agent_run` */
  readonly kind: string;
  readonly logic: TLogic;
  readonly policy: FailurePolicy;
  /** the state name shown in the registry; default: the top-level state value */
  describe?(snapshot: SnapshotFrom<TLogic>): string;
  /** sent to each live actor at shutdown so it heads for a safe point; none = stopped when the grace period ends */
  readonly shutdownEvent?: EventFromLogic<TLogic>;
  /** the actor failed for good (policy `fail`, or restarts exhausted); never throws into the supervisor */
  onFailed?(entry: ActorInfo, error: unknown): Promise<void> | void;
  /** the actor was still live when the grace period ended and was stopped */
  onAbandoned?(entry: ActorInfo): Promise<void> | void;
  /** awaited at the end of shutdown: pending writes of this kind */
  drain?(): Promise<void>;
}

export interface ActorInfo {
  readonly id: string;
  readonly kind: string;
  /** current state name (kind's `describe`) */
  readonly state: string;
  /** `stopping` once shutdown asked it to reach a safe point */
  readonly status: 'running' | 'stopping';
  readonly started_at: string;
  readonly parent: string | null;
  readonly restarts: number;
  /** organization the actor works for, when it has one (registry listings are filtered by it) */
  readonly org_id: string | null;
}

export interface SpawnOptions<TInput> {
  readonly id: string;
  readonly input: TInput;
  readonly parent?: string | null;
  readonly orgId?: string | null;
}

/** One registered kind, typed by its machine: the only way to spawn, message and read its actors. */
export interface KindHandle<TLogic extends AnyActorLogic> {
  readonly kind: string;
  /** Creates and starts an actor; throws SupervisorClosedError during shutdown, an Error on a duplicate id. */
  spawn(options: SpawnOptions<InputFrom<TLogic>>): void;
  /** Sends an event to a live actor of this kind; false when there is none. */
  send(id: string, event: EventFromLogic<TLogic>): boolean;
  /** The live actor's snapshot, or undefined once it finished (or when the id is another kind's). */
  snapshot(id: string): SnapshotFrom<TLogic> | undefined;
  /**
   * Stops a live actor whose state its kind persisted (a parked agent run): no
   * hook runs, `whenFinished` resolves, the id may be spawned again. False when there is none.
   */
  evict(id: string): boolean;
}

interface Entry {
  readonly id: string;
  readonly kind: ActorKind;
  readonly input: unknown;
  readonly parent: string | null;
  readonly orgId: string | null;
  readonly startedAt: number;
  actor: AnyActorRef;
  restarts: number;
  stopping: boolean;
  /** resolves when the actor is finished for good (done, failed, stopped) */
  readonly finished: Promise<void>;
  settle: () => void;
}

export class SupervisorClosedError extends Error {
  constructor() {
    super('the runtime is shutting down: no new actors');
    this.name = 'SupervisorClosedError';
  }
}

export interface SupervisorOptions {
  readonly clock?: RuntimeClock;
  readonly logger: Logger;
  /** @default 10000 */
  readonly shutdownGraceMs?: number;
}

export class Supervisor {
  readonly clock: RuntimeClock;
  private readonly kinds = new Map<string, ActorKind>();
  private readonly entries = new Map<string, Entry>();
  private readonly logger: Logger;
  private readonly graceMs: number;
  private closing: Promise<void> | null = null;

  constructor(options: SupervisorOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger;
    this.graceMs = options.shutdownGraceMs ?? 10_000;
  }

  /** Declares an actor kind and returns its typed handle; throws on a duplicate kind name (a wiring bug). */
  registerKind<TLogic extends AnyActorLogic>(kind: ActorKind<TLogic>): KindHandle<TLogic> {
    if (this.kinds.has(kind.kind)) throw new Error(`actor kind "${kind.kind}" is already registered`);
    const erased = kind as unknown as ActorKind;
    this.kinds.set(kind.kind, erased);
    const own = (id: string): Entry | undefined => {
      const entry = this.entries.get(id);
      return entry?.kind === erased ? entry : undefined;
    };
    return {
      kind: kind.kind,
      spawn: (options) => this.spawn(erased, options),
      send: (id, event) => {
        const entry = own(id);
        if (!entry) return false;
        entry.actor.send(event);
        return true;
      },
      // the entry was created from this kind's logic, so its snapshot has the logic's type
      snapshot: (id) => own(id)?.actor.getSnapshot() as SnapshotFrom<TLogic> | undefined,
      evict: (id) => {
        const entry = own(id);
        if (!entry) return false;
        this.entries.delete(id);
        entry.actor.stop();
        entry.settle();
        return true;
      },
    };
  }

  get accepting(): boolean {
    return this.closing === null;
  }

  private spawn(kind: ActorKind, options: SpawnOptions<unknown>): void {
    if (this.closing) throw new SupervisorClosedError();
    if (this.entries.has(options.id)) throw new Error(`actor ${options.id} already exists`);
    let settle = (): void => {};
    const finished = new Promise<void>((resolve) => (settle = resolve));
    const entry: Entry = {
      id: options.id,
      kind,
      input: options.input,
      parent: options.parent ?? null,
      orgId: options.orgId ?? null,
      startedAt: this.clock.now(),
      actor: undefined as unknown as AnyActorRef,
      restarts: 0,
      stopping: false,
      finished,
      settle,
    };
    this.entries.set(entry.id, entry);
    this.start(entry);
  }

  /** Whether an actor (of any kind) with this id is live. */
  has(id: string): boolean {
    return this.entries.has(id);
  }

  info(id: string): ActorInfo | undefined {
    const entry = this.entries.get(id);
    return entry ? this.describe(entry) : undefined;
  }

  /** The registry, oldest first (ids are time-sorted where kinds use `newId`). */
  list(filter: { readonly orgId?: string; readonly kind?: string } = {}): ActorInfo[] {
    const out: ActorInfo[] = [];
    for (const entry of this.entries.values()) {
      if (filter.orgId !== undefined && entry.orgId !== filter.orgId) continue;
      if (filter.kind !== undefined && entry.kind.kind !== filter.kind) continue;
      out.push(this.describe(entry));
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  get size(): number {
    return this.entries.size;
  }

  /** Resolves when the actor has finished (immediately when it is not live). */
  whenFinished(id: string): Promise<void> {
    return this.entries.get(id)?.finished ?? Promise.resolve();
  }

  /**
   * Stops accepting actors, asks each live one to reach a safe point, waits up
   * to the grace period, stops the rest (their kind marks them), then drains
   * every kind's pending writes. Idempotent.
   */
  shutdown(): Promise<void> {
    this.closing ??= this.runShutdown();
    return this.closing;
  }

  private async runShutdown(): Promise<void> {
    const live = [...this.entries.values()];
    for (const entry of live) {
      entry.stopping = true;
      if (entry.kind.shutdownEvent) entry.actor.send(entry.kind.shutdownEvent);
    }
    let timer: unknown;
    const graceOver = new Promise<'timeout'>((resolve) => {
      timer = this.clock.setTimeout(() => resolve('timeout'), this.graceMs);
    });
    const allDone = Promise.all(live.map((entry) => entry.finished)).then(() => 'done' as const);
    const outcome = await Promise.race([allDone, graceOver]);
    this.clock.clearTimeout(timer);
    if (outcome === 'timeout') {
      for (const entry of [...this.entries.values()]) {
        this.logger.warn({ actor: entry.id, kind: entry.kind.kind }, 'actor did not reach a safe point in time: stopped');
        this.entries.delete(entry.id);
        entry.actor.stop();
        await this.hook(entry, () => entry.kind.onAbandoned?.(this.describe(entry)));
        entry.settle();
      }
    }
    for (const kind of this.kinds.values()) {
      if (kind.drain) await kind.drain();
    }
  }

  private start(entry: Entry): void {
    const actor = createActor(entry.kind.logic, {
      id: entry.id,
      input: entry.input,
      clock: this.clock,
    });
    entry.actor = actor;
    actor.subscribe({
      next: (snapshot: { readonly status: string }) => {
        if (snapshot.status === 'done' && entry.actor === actor) this.finish(entry);
      },
      error: (error) => {
        if (entry.actor === actor) this.onError(entry, error);
      },
      complete: () => {
        if (entry.actor === actor && (actor.getSnapshot() as { readonly status: string }).status !== 'error') this.finish(entry);
      },
    });
    actor.start();
  }

  private finish(entry: Entry): void {
    if (this.entries.get(entry.id) !== entry) return;
    this.entries.delete(entry.id);
    entry.settle();
  }

  private onError(entry: Entry, error: unknown): void {
    if (this.entries.get(entry.id) !== entry) return;
    const { policy } = entry.kind;
    if (policy.onFailure === 'restart' && entry.restarts < policy.maxRestarts && !entry.stopping) {
      entry.restarts += 1;
      this.logger.warn({ err: error, actor: entry.id, kind: entry.kind.kind, restarts: entry.restarts }, 'actor failed: restarting');
      this.start(entry);
      return;
    }
    this.logger.error({ err: error, actor: entry.id, kind: entry.kind.kind, restarts: entry.restarts }, 'actor failed');
    const info = this.describe(entry);
    this.entries.delete(entry.id);
    void this.hook(entry, () => entry.kind.onFailed?.(info, error)).then(() => entry.settle());
  }

  /** Runs a kind hook; a hook that throws is logged, never propagated. */
  private async hook(entry: Entry, run: () => Promise<void> | void | undefined): Promise<void> {
    try {
      await run();
    } catch (error) {
      this.logger.error({ err: error, actor: entry.id, kind: entry.kind.kind }, 'actor kind hook failed');
    }
  }

  private describe(entry: Entry): ActorInfo {
    const snapshot = entry.actor.getSnapshot() as { value?: unknown; status: string };
    const state = entry.kind.describe ? entry.kind.describe(snapshot) : typeof snapshot.value === 'string' ? snapshot.value : snapshot.status;
    return {
      id: entry.id,
      kind: entry.kind.kind,
      state,
      status: entry.stopping ? 'stopping' : 'running',
      started_at: isoAt(entry.startedAt),
      parent: entry.parent,
      restarts: entry.restarts,
      org_id: entry.orgId,
    };
  }
}

/**
 * The job queue on NATS JetStream (`NATS_URL`), within what the 2.9.10 server
 * supports. Per queue: a work-queue stream `<prefix>_<queue>` on subject
 * `<prefix>.jobs.<queue>`, one durable pull consumer `<prefix>_<queue>_workers`
 * (explicit ack, `AckWait` = the lease, `MaxDeliver`), and a dead-letter
 * stream `<prefix>_<queue>_dead` fed from the max-deliveries advisory. The
 * job ledger (`jetstream-ledger.ts`) holds state, result and the fence
 * `<stream seq>.<delivery count>`; acks go to the delivery's reply subject
 * stored there, so any process holding the queue can settle a job.
 */
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy, RetentionPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { RuntimeClock } from '../clock.js';
import { ServiceError } from '../errors.js';
import { pullNow } from './jetstream-pull.js';
import { isNotFound, JobLedger, type LedgerEntry } from './jetstream-ledger.js';
import {
  DEFAULT_SETTLED_KEEP_MS,
  QUEUE_NAMES,
  sweepInterval,
  type JobInfo,
  type JobQueue,
  type JobQueueOptions,
  type JobSpec,
  type Lease,
  type QueueName,
  type QueueStats,
  type SweepReport,
} from './queue.js';

interface JetStreamQueueOptions extends JobQueueOptions {
  readonly url: string;
  /** stream and subject prefix (tests use a unique one) */
  readonly prefix?: string;
  /** dedupe window of `Nats-Msg-Id` on enqueue; older ids are caught by the ledger */
  readonly duplicateWindowMs?: number;
  /**
   * a pending, never-delivered job older than this whose message is not in
   * its stream is published again by the sweep (default 30 s; kept under the
   * dedupe window, so a publish still in flight is not doubled)
   */
  readonly republishAfterMs?: number;
}

const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MAX_CLAIM = 100;
/** how often a waiting claim looks again at its queues */
const CLAIM_POLL_MS = 100;
const ACK_TIMEOUT_MS = 5_000;

export class JetStreamJobQueue implements JobQueue {
  readonly #advisories: Subscription[] = [];
  #closed = false;
  #sweepTimer: unknown = undefined;

  private constructor(
    readonly nc: NatsConnection,
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    readonly ledger: JobLedger,
    readonly prefix: string,
    readonly clock: RuntimeClock,
    readonly options: JetStreamQueueOptions,
  ) {}

  static async open(clock: RuntimeClock, options: JetStreamQueueOptions): Promise<JetStreamJobQueue> {
    const nc = await connect({ servers: options.url, name: 'agent-context-service jobs' });
    try {
      const js = jetstream(nc);
      const jsm = await jetstreamManager(nc);
      const prefix = options.prefix ?? 'acs';
      const ledger = new JobLedger(js, jsm, prefix);
      const queue = new JetStreamJobQueue(nc, js, jsm, ledger, prefix, clock, options);
      await queue.#ensure();
      queue.#scheduleSweep();
      return queue;
    } catch (e) {
      await nc.close();
      throw e;
    }
  }

  streamOf(queue: QueueName): string {
    return `${this.prefix}_${queue}`;
  }

  consumerOf(queue: QueueName): string {
    return `${this.prefix}_${queue}_workers`;
  }

  /** one subject per job (`<prefix>.jobs.<queue>.<base64url id>`): whether its message is still in the stream is one lookup */
  subjectOf(spec: Pick<JobSpec, 'id' | 'queue'>): string {
    return `${this.prefix}.jobs.${spec.queue}.${Buffer.from(spec.id, 'utf8').toString('base64url')}`;
  }

  #duplicateWindowMs(): number {
    return this.options.duplicateWindowMs ?? DEFAULT_DUPLICATE_WINDOW_MS;
  }

  async #ensure(): Promise<void> {
    await this.ledger.ensure(this.options.settledKeepMs ?? DEFAULT_SETTLED_KEEP_MS);
    const ns = (ms: number) => ms * 1_000_000;
    for (const queue of QUEUE_NAMES) {
      const stream = this.streamOf(queue);
      await upsertStream(this.jsm, {
        name: stream,
        // the bare subject carries the messages of releases before per-job subjects
        subjects: [`${this.prefix}.jobs.${queue}`, `${this.prefix}.jobs.${queue}.*`],
        retention: RetentionPolicy.Workqueue,
        duplicate_window: ns(this.#duplicateWindowMs()),
      });
      await upsertStream(this.jsm, { name: `${stream}_dead`, subjects: [`${this.prefix}.dead.${queue}`] });
      const consumer = {
        durable_name: this.consumerOf(queue),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: ns(this.options.leaseMs),
        max_deliver: Math.max(1, this.options.maxDeliver),
        max_ack_pending: 10_000,
      };
      try {
        await this.jsm.consumers.info(stream, consumer.durable_name);
        await this.jsm.consumers.update(stream, consumer.durable_name, consumer);
      } catch {
        await this.jsm.consumers.add(stream, consumer);
      }
      const advisory = this.nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${stream}.${consumer.durable_name}`, {
        callback: (err, msg) => {
          if (err) return;
          const event = msg.json<{ stream_seq: number; deliveries: number }>();
          void this.#deadFromAdvisory(queue, event.stream_seq, event.deliveries).catch(() => undefined);
        },
      });
      this.#advisories.push(advisory);
    }
    await this.nc.flush();
  }

  async enqueue(spec: JobSpec): Promise<JobInfo> {
    this.#open();
    const entry: LedgerEntry = {
      spec: { id: spec.id, queue: spec.queue, orgId: spec.orgId, kind: spec.kind, payload: spec.payload },
      state: 'pending',
      deliveries: 0,
      enqueuedAt: this.clock.now(),
      result: null,
      error: null,
      fence: '',
      reply: '',
      workerId: '',
      expiresAt: 0,
    };
    if (!(await this.ledger.write(spec.id, entry, 0))) {
      const existing = await this.ledger.read(spec.id);
      if (existing) {
        // an enqueue retried after its publish failed: the ledger has the job, the stream may not
        if (neverDelivered(existing.value)) await this.#ensurePublished(existing.value);
        return infoOf(existing.value);
      }
    }
    await this.#publish(entry.spec);
    return infoOf(entry);
  }

  #publish(spec: JobSpec): Promise<unknown> {
    return this.js.publish(this.subjectOf(spec), encoder.encode(JSON.stringify(spec)), { msgID: spec.id });
  }

  /** publishes a never-delivered job again when its message is not in the stream; true when it did */
  async #ensurePublished(entry: LedgerEntry): Promise<boolean> {
    const present = await this.jsm.streams.getMessage(this.streamOf(entry.spec.queue), { last_by_subj: this.subjectOf(entry.spec) }).catch((e: unknown) => {
      if (isNotFound(e)) return null;
      throw e;
    });
    if (present) return false;
    await this.#publish(entry.spec);
    return true;
  }

  #scheduleSweep(): void {
    this.#sweepTimer = this.clock.setTimeout(() => {
      if (this.#closed) return;
      void this.sweep()
        .catch(() => undefined)
        .finally(() => this.#scheduleSweep());
    }, sweepInterval(this.options));
  }

  /**
   * Walks the ledger. Settled entries are left to the ledger stream's max
   * age (the keep period); an unsettled entry or a counter past half of it
   * is written again unchanged, so it never ages out; a pending job never
   * delivered, older than `republishAfterMs`, whose message is not in its
   * stream (the publish after the ledger write was lost: a crash, a timeout)
   * is published again (same `Nats-Msg-Id`).
   */
  async sweep(): Promise<SweepReport> {
    const now = this.clock.now();
    const keepMs = this.options.settledKeepMs ?? DEFAULT_SETTLED_KEEP_MS;
    const republishAfter = Math.min(this.options.republishAfterMs ?? 30_000, this.#duplicateWindowMs() / 2);
    let republished = 0;
    let refreshed = 0;
    for await (const stored of this.ledger.all()) {
      if (this.#closed) break;
      const entry = stored.counter ? null : (stored.value as LedgerEntry);
      if (entry && (entry.state === 'done' || entry.state === 'dead')) continue;
      if (now - stored.time > keepMs / 2 && (await this.ledger.touch(stored))) refreshed += 1;
      if (entry && neverDelivered(entry) && now - entry.enqueuedAt >= republishAfter && (await this.#ensurePublished(entry))) republished += 1;
    }
    return { republished, refreshed, forgotten: 0 };
  }

  async claim(workerId: string, queues: readonly QueueName[], options: { readonly max?: number; readonly waitMs?: number } = {}): Promise<Lease[]> {
    this.#open();
    const max = Math.min(MAX_CLAIM, Math.max(1, options.max ?? 1));
    const deadline = this.clock.now() + (options.waitMs ?? 0);
    for (;;) {
      const leases: Lease[] = [];
      for (const queue of queues) {
        if (leases.length >= max) break;
        leases.push(...(await this.#claimFrom(workerId, queue, max - leases.length)));
      }
      if (leases.length > 0 || this.clock.now() >= deadline || this.#closed) return leases;
      await new Promise((resolve) => this.clock.setTimeout(() => resolve(undefined), Math.min(CLAIM_POLL_MS, deadline - this.clock.now())));
    }
  }

  async #claimFrom(workerId: string, queue: QueueName, max: number): Promise<Lease[]> {
    const pulled = await pullNow(this.nc, this.streamOf(queue), this.consumerOf(queue), max);
    // the deliveries of one pull are leased in parallel: each is its own compare-and-set on its own ledger subject
    const leased = await Promise.all(
      pulled.map(async (msg): Promise<Lease | null> => {
        const spec = JSON.parse(decoder.decode(msg.data)) as JobSpec;
        const delivery = msg.deliveryCount;
        const fence = `${msg.streamSeq}.${delivery}`;
        const expiresAt = this.clock.now() + this.options.leaseMs;
        let settled = false;
        const next = await this.ledger.update(spec.id, (entry) => {
          if (entry.state === 'done' || entry.state === 'dead') {
            settled = true;
            return null;
          }
          return { ...entry, state: 'leased', deliveries: delivery, fence, reply: msg.reply, workerId, expiresAt };
        });
        if (next === null) {
          // settled by an earlier delivery (a late complete won) or unknown to the ledger: drop this delivery
          this.nc.publish(msg.reply, encoder.encode(settled ? '+ACK' : '+TERM'));
          return null;
        }
        return { job: next.spec, delivery, fence, workerId, expiresAt };
      }),
    );
    const leases = leased.filter((lease): lease is Lease => lease !== null);
    for (const lease of leases) if (lease.delivery > 1) await this.ledger.increment(`${queue}.redelivered`);
    return leases;
  }

  async renew(jobId: string, fence: string): Promise<Lease> {
    this.#open();
    const now = this.clock.now();
    const next = await this.ledger.update(jobId, (entry) => {
      assertCurrent(jobId, fence, entry, now);
      return { ...entry, expiresAt: now + this.options.leaseMs };
    });
    if (next === null) throw notFound(jobId);
    this.nc.publish(next.reply, encoder.encode('+WPI'));
    await this.nc.flush();
    return { job: next.spec, delivery: next.deliveries, fence: next.fence, workerId: next.workerId, expiresAt: next.expiresAt };
  }

  async complete(jobId: string, fence: string, result: Record<string, unknown>): Promise<JobInfo> {
    this.#open();
    const now = this.clock.now();
    const next = await this.ledger.update(jobId, (entry) => {
      assertCurrent(jobId, fence, entry, now);
      return { ...entry, state: 'done', result, error: null };
    });
    if (next === null) throw notFound(jobId);
    // the ledger already says done: a lost ack only means a redelivery that the next claim acks and drops
    await this.nc.request(next.reply, encoder.encode('+ACK'), { timeout: ACK_TIMEOUT_MS }).catch(() => undefined);
    return infoOf(next);
  }

  async fail(jobId: string, fence: string, error: string): Promise<JobInfo> {
    this.#open();
    const now = this.clock.now();
    const last = (entry: LedgerEntry) => entry.deliveries >= this.options.maxDeliver;
    const next = await this.ledger.update(jobId, (entry) => {
      assertCurrent(jobId, fence, entry, now);
      return { ...entry, state: last(entry) ? 'dead' : 'pending', error };
    });
    if (next === null) throw notFound(jobId);
    if (next.state === 'dead') {
      await this.nc.request(next.reply, encoder.encode('+TERM'), { timeout: ACK_TIMEOUT_MS }).catch(() => undefined);
      await this.#bury(next, Number(fence.split('.')[0]));
    } else {
      await this.nc.request(next.reply, encoder.encode('-NAK'), { timeout: ACK_TIMEOUT_MS }).catch(() => undefined);
    }
    return infoOf(next);
  }

  /** the max-deliveries advisory: the last delivery's lease lapsed; the message stays in the stream until moved */
  async #deadFromAdvisory(queue: QueueName, seq: number, deliveries: number): Promise<void> {
    const stored = await this.jsm.streams.getMessage(this.streamOf(queue), { seq }).catch(() => null);
    if (!stored) return;
    const spec = stored.json<JobSpec>();
    const next = await this.ledger.update(spec.id, (entry) => {
      if (entry.state === 'done' || entry.state === 'dead') return null;
      return { ...entry, state: 'dead', error: `${entry.error ?? 'lease lapsed'} (max deliveries ${deliveries} reached)` };
    });
    if (next) await this.#bury(next, seq);
    else await this.jsm.streams.deleteMessage(this.streamOf(queue), seq).catch(() => false);
  }

  /** copy a dead job to its dead-letter stream, then delete it from the work stream */
  async #bury(entry: LedgerEntry, seq: number): Promise<void> {
    await this.js.publish(`${this.prefix}.dead.${entry.spec.queue}`, encoder.encode(JSON.stringify(entry.spec)), { msgID: `dead:${entry.spec.id}` });
    await this.jsm.streams.deleteMessage(this.streamOf(entry.spec.queue), seq).catch(() => false);
  }

  async get(jobId: string): Promise<JobInfo | null> {
    const current = await this.ledger.read(jobId);
    return current ? infoOf(current.value) : null;
  }

  async stats(): Promise<Record<QueueName, QueueStats>> {
    const now = this.clock.now();
    const entries = await Promise.all(
      QUEUE_NAMES.map(async (queue): Promise<[QueueName, QueueStats]> => {
        const stream = this.streamOf(queue);
        const [info, dead, redelivered] = await Promise.all([
          this.jsm.consumers.info(stream, this.consumerOf(queue)),
          this.jsm.streams.info(`${stream}_dead`),
          this.ledger.counter(`${queue}.redelivered`),
        ]);
        let oldestPendingS: number | null = null;
        if (info.num_pending > 0) {
          // the first never-delivered message (`next_by_subj` skips deleted sequences; the 2.9 server reads it)
          const query = { seq: info.delivered.stream_seq + 1, next_by_subj: `${this.prefix}.jobs.${queue}.>` } as unknown as { seq: number };
          const next = await this.jsm.streams.getMessage(stream, query).catch(() => null);
          if (next) oldestPendingS = Math.max(0, Math.floor((now - next.time.getTime()) / 1000));
        }
        return [queue, { depth: info.num_pending, inflight: info.num_ack_pending, oldestPendingS, redelivered, deadLetters: dead.state.messages }];
      }),
    );
    return Object.fromEntries(entries) as Record<QueueName, QueueStats>;
  }

  async deadLetters(queue: QueueName, limit = 50): Promise<JobInfo[]> {
    const stream = `${this.streamOf(queue)}_dead`;
    const info = await this.jsm.streams.info(stream);
    const out: JobInfo[] = [];
    for (let seq = info.state.last_seq; seq >= info.state.first_seq && seq > 0 && out.length < limit; seq -= 1) {
      const stored = await this.jsm.streams.getMessage(stream, { seq }).catch(() => null);
      if (!stored) continue;
      const current = await this.ledger.read(stored.json<JobSpec>().id);
      if (current) out.push(infoOf(current.value));
    }
    return out;
  }

  async settled(jobId: string): Promise<JobInfo> {
    // subscribe before reading, so a change between the two is not missed
    const sub = this.nc.subscribe(this.ledger.subject(jobId));
    try {
      const current = await this.ledger.read(jobId);
      if (!current) throw notFound(jobId);
      if (current.value.state === 'done' || current.value.state === 'dead') return infoOf(current.value);
      for await (const msg of sub) {
        const entry = msg.json<LedgerEntry>();
        if (entry.state === 'done' || entry.state === 'dead') return infoOf(entry);
      }
      throw closedError();
    } finally {
      sub.unsubscribe();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.clock.clearTimeout(this.#sweepTimer);
    for (const sub of this.#advisories) sub.unsubscribe();
    await this.nc.drain().catch(() => undefined);
  }

  #open(): void {
    if (this.#closed) throw closedError();
  }
}

async function upsertStream(
  jsm: JetStreamManager,
  config: { name: string; subjects: string[]; retention?: RetentionPolicy; duplicate_window?: number },
): Promise<void> {
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    await jsm.streams.add(config);
  }
}

function assertCurrent(jobId: string, fence: string, entry: LedgerEntry, now: number): void {
  if (entry.state !== 'leased' || entry.fence !== fence || entry.expiresAt < now) {
    throw new ServiceError('lease_lost', `job ${jobId}: fence ${fence} is not the current delivery`, { job_id: jobId, fence, state: entry.state });
  }
}

const neverDelivered = (entry: LedgerEntry): boolean => entry.state === 'pending' && entry.deliveries === 0;

function infoOf(entry: LedgerEntry): JobInfo {
  const { spec, state, deliveries, enqueuedAt, result, error } = entry;
  return { ...spec, state, deliveries, enqueuedAt, result, error };
}

const notFound = (jobId: string) => new ServiceError('not_found', `no job ${jobId}`, { job_id: jobId });
const closedError = () => new ServiceError('service_unavailable', 'the job queue is closed');

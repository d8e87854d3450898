/**
 * The JetStream queue's job ledger: one state stream, one subject per job
 * (`<prefix>.ledger.<base64url id>`, `max_msgs_per_subject` 1), the latest
 * message is the job's state. Every change is a compare-and-set on the
 * subject's last sequence (`Nats-Expected-Last-Subject-Sequence`, which the
 * 2.9 server supports), so two workers racing on one job cannot both win:
 * the ledger, not the transport, decides which delivery's result counts.
 * (No KV bucket: `@nats-io/kv` is not installed here; the KV API is this same
 * stream shape underneath.)
 */
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { JobInfo, JobSpec } from './queue.js';

export interface LedgerEntry {
  readonly spec: JobSpec;
  readonly state: JobInfo['state'];
  readonly deliveries: number;
  readonly enqueuedAt: number;
  readonly result: Record<string, unknown> | null;
  readonly error: string | null;
  /** `<stream seq>.<delivery count>` of the current delivery; '' before the first */
  readonly fence: string;
  /** the current delivery's ack subject: any process can ack, nak, term or heartbeat it */
  readonly reply: string;
  readonly workerId: string;
  readonly expiresAt: number;
}

/** one message of the ledger stream as the sweep walks it */
export interface StoredLedgerMessage {
  readonly subject: string;
  /** a counter (`<prefix>.counter.<name>`) rather than a job entry */
  readonly counter: boolean;
  readonly seq: number;
  /** when it was written (ms since epoch, the server's clock) */
  readonly time: number;
  readonly value: unknown;
}

/** a ledger entry and the stream sequence it was read at (the compare-and-set guard) */
interface Versioned<T> {
  readonly value: T;
  readonly seq: number;
}

const encoder = new TextEncoder();
const KNOWN_MAX = 50_000;
const decoder = new TextDecoder();

export class JobLedger {
  readonly stream: string;
  readonly #prefix: string;
  /**
   * The entries this process last wrote or read, with their sequence: an
   * update tries its compare-and-set on them first and reads the stream only
   * when another writer moved on (saves a read per claim, renew and complete).
   */
  readonly #known = new Map<string, Versioned<LedgerEntry>>();

  constructor(
    readonly js: JetStreamClient,
    readonly jsm: JetStreamManager,
    prefix: string,
  ) {
    this.#prefix = prefix;
    this.stream = `${prefix}_ledger`;
  }

  /** `maxAgeMs`: the stream's max age; the queue's sweep writes unsettled entries again before it drops them */
  async ensure(maxAgeMs: number): Promise<void> {
    const config = {
      name: this.stream,
      subjects: [`${this.#prefix}.ledger.>`, `${this.#prefix}.counter.>`],
      max_msgs_per_subject: 1,
      max_age: maxAgeMs * 1_000_000,
    };
    try {
      await this.jsm.streams.info(this.stream);
      await this.jsm.streams.update(this.stream, config);
    } catch {
      await this.jsm.streams.add(config);
    }
  }

  subject(jobId: string): string {
    return `${this.#prefix}.ledger.${Buffer.from(jobId, 'utf8').toString('base64url')}`;
  }

  async read(jobId: string): Promise<Versioned<LedgerEntry> | null> {
    const current = await this.#read<LedgerEntry>(this.subject(jobId));
    if (current) this.#remember(jobId, current);
    return current;
  }

  /** write when the subject's last sequence is still `seq` (0: the job is new); false when another writer won */
  async write(jobId: string, value: LedgerEntry, seq: number): Promise<boolean> {
    const written = await this.#write(this.subject(jobId), value, seq);
    if (written === null) this.#known.delete(jobId);
    else this.#remember(jobId, { value, seq: written });
    return written !== null;
  }

  #remember(jobId: string, entry: Versioned<LedgerEntry>): void {
    this.#known.delete(jobId);
    if (entry.value.state === 'done' || entry.value.state === 'dead') return;
    this.#known.set(jobId, entry);
    // bounded: forget the oldest remembered entry (a miss costs one read)
    if (this.#known.size > KNOWN_MAX) this.#known.delete(this.#known.keys().next().value ?? '');
  }

  /** read, change, compare-and-set, retried while other writers win; null when `change` declines */
  async update(jobId: string, change: (entry: LedgerEntry) => LedgerEntry | null): Promise<LedgerEntry | null> {
    const known = this.#known.get(jobId);
    if (known) {
      // the remembered entry may be stale: a refusal or a lost compare-and-set falls through to a fresh read
      const next = attempt(() => change(known.value));
      if (next && (await this.write(jobId, next, known.seq))) return next;
    }
    for (let tries = 0; tries < 8; tries += 1) {
      const current = await this.read(jobId);
      if (!current) return null;
      const next = change(current.value);
      if (next === null) return null;
      if (await this.write(jobId, next, current.seq)) return next;
    }
    throw new Error(`job ${jobId}: ledger contention`);
  }

  /**
   * Every entry and counter as stored now (one message per subject: the
   * stream keeps only the last), read with an ordered consumer from the
   * first sequence up to the last one present when the walk started.
   */
  async *all(): AsyncGenerator<StoredLedgerMessage> {
    const info = await this.jsm.streams.info(this.stream);
    const last = info.state.last_seq;
    if (info.state.messages === 0) return;
    const consumer = await this.js.consumers.get(this.stream);
    try {
      for (;;) {
        const batch = await consumer.fetch({ max_messages: 500, expires: 2_000 });
        let got = 0;
        for await (const msg of batch) {
          got += 1;
          const name = msg.subject.slice(this.#prefix.length + 1);
          yield {
            subject: msg.subject,
            counter: name.startsWith('counter.'),
            seq: msg.seq,
            time: msg.time.getTime(),
            value: JSON.parse(decoder.decode(msg.data)) as unknown,
          };
          if (msg.seq >= last || msg.info.pending === 0) return;
        }
        if (got === 0) return;
      }
    } finally {
      await consumer.delete().catch(() => false);
    }
  }

  /** writes an entry or counter again unchanged (a newer message: its age starts over); false when another writer moved on */
  async touch(entry: StoredLedgerMessage): Promise<boolean> {
    return (await this.#write(entry.subject, entry.value, entry.seq)) !== null;
  }

  async counter(name: string): Promise<number> {
    return (await this.#read<number>(`${this.#prefix}.counter.${name}`))?.value ?? 0;
  }

  async increment(name: string): Promise<void> {
    const subject = `${this.#prefix}.counter.${name}`;
    for (let attempt = 0; attempt < 16; attempt += 1) {
      const current = await this.#read<number>(subject);
      if ((await this.#write(subject, (current?.value ?? 0) + 1, current?.seq ?? 0)) !== null) return;
    }
  }

  async #read<T>(subject: string): Promise<Versioned<T> | null> {
    const stored = await this.jsm.streams.getMessage(this.stream, { last_by_subj: subject }).catch((e: unknown) => {
      if (isNotFound(e)) return null;
      throw e;
    });
    if (!stored) return null;
    return { value: JSON.parse(decoder.decode(stored.data)) as T, seq: stored.seq };
  }

  /** the new sequence, or null when another writer won */
  async #write(subject: string, value: unknown, seq: number): Promise<number | null> {
    try {
      const ack = await this.js.publish(subject, encoder.encode(JSON.stringify(value)), { expect: { lastSubjectSequence: seq } });
      return ack.seq;
    } catch (e) {
      if (e instanceof Error && /wrong last sequence/i.test(e.message)) return null;
      throw e;
    }
  }
}

function attempt<T>(run: () => T): T | null {
  try {
    return run();
  } catch {
    return null;
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof Error && /not found|no message found/i.test(e.message);
}

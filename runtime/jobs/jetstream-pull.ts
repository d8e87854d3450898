/**
 * One `no_wait` pull from a durable pull consumer: what is deliverable right
 * now (new messages and redeliveries of lapsed or nak'ed ones), without
 * waiting. The client library's `fetch` waits at least 1 s for a full batch
 * and the consumer's `num_pending` does not count redeliveries, so the
 * request is sent by hand: `$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`
 * with `{batch, no_wait}`; the server answers the messages, then a 404/408
 * status when it has fewer than asked.
 */
import { createInbox, type NatsConnection } from '@nats-io/transport-node';

interface Pulled {
  readonly data: Uint8Array;
  /** the delivery's ack subject `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<ts>.<pending>` */
  readonly reply: string;
  readonly streamSeq: number;
  readonly deliveryCount: number;
}

const encoder = new TextEncoder();

export async function pullNow(nc: NatsConnection, stream: string, consumer: string, batch: number, timeoutMs = 2_000): Promise<Pulled[]> {
  const inbox = createInbox();
  const sub = nc.subscribe(inbox, { timeout: timeoutMs });
  const out: Pulled[] = [];
  nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`, encoder.encode(JSON.stringify({ batch, no_wait: true })), { reply: inbox });
  try {
    for await (const msg of sub) {
      const status = msg.headers?.code ?? 0;
      if (status !== 0 || !msg.reply) break;
      const tokens = msg.reply.split('.');
      // v1 ack subject: $JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>
      out.push({ data: msg.data, reply: msg.reply, deliveryCount: Number(tokens[4]), streamSeq: Number(tokens[5]) });
      if (out.length >= batch) break;
    }
  } catch {
    // the timeout: whatever arrived is the answer
  } finally {
    sub.unsubscribe();
  }
  return out;
}

/** A chat reply whose run a previous stop interrupted: failed, with the text streamed so far. */
import type { InterruptedReply } from '../../runtime/agent/recovery.js';
import type { Collections } from '../collections.js';

export const failInterruptedReply =
  (chatMessages: Collections['chatMessages']): InterruptedReply =>
  async (org, messageId, text, error) => {
    await chatMessages.update(org, messageId, { status: 'failed', content: text, finish_reason: 'error', error });
  };

/**
 * A channel's platform credentials (bot token, signing secret, app token),
 * sealed at rest with a key derived from the server secret and bound to the
 * channel, so a sealed blob copied to another record does not open.
 */
import { z } from 'zod';
import { deriveKey, seal, unseal } from '../../runtime/crypto.js';

const channelCredentialsSchema = z.object({
  bot_token: z.string().min(1),
  signing_secret: z.string().min(1),
  app_token: z.string().min(1).nullable(),
});
export type ChannelCredentials = z.output<typeof channelCredentialsSchema>;

export class ChannelSealer {
  private readonly key: Buffer;

  constructor(rootSecret: Uint8Array) {
    this.key = deriveKey(rootSecret, 'channel-credentials');
  }

  seal(orgId: string, channelId: string, credentials: ChannelCredentials): string {
    return seal(this.key, JSON.stringify(credentials), `channel:${orgId}:${channelId}`);
  }

  /** throws when the blob was sealed for another channel or under another server secret */
  unseal(orgId: string, channelId: string, sealed: string): ChannelCredentials {
    return channelCredentialsSchema.parse(JSON.parse(unseal(this.key, sealed, `channel:${orgId}:${channelId}`)));
  }
}

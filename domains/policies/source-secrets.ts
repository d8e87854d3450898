/**
 * A policy source's git_ssh_key: write-only, sealed at rest with a key derived
 * from the source-config root secret and bound to the organization and the
 * source, so a sealed key copied to another record does not open.
 */
import { deriveKey, seal, unseal } from '../../runtime/crypto.js';

/** What reads show for a stored key; sent back in a patch, it keeps the stored key. */
export const MASKED_SSH_KEY = '********';

export class PolicySourceKeys {
  private readonly key: Buffer;

  /** @param rootSecret SOURCE_CONFIG_KEY, else JWT_SECRET: changing it makes stored keys unreadable */
  constructor(rootSecret: Uint8Array) {
    this.key = deriveKey(rootSecret, 'policy-source-ssh-keys');
  }

  seal(orgId: string, sourceId: string, sshKey: string): string {
    return seal(this.key, sshKey, `policy-source:${orgId}:${sourceId}`);
  }

  /** @throws when sealed for another source or under another root secret */
  open(orgId: string, sourceId: string, sealed: string): string {
    return unseal(this.key, sealed, `policy-source:${orgId}:${sourceId}`);
  }
}

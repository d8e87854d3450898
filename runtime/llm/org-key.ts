/**
 * An organization's own LLM key (settings `llm_api_key`): write-only, sealed at
 * rest with a key derived from the server secret, and bound to the organization
 * AND the base URL it was given for. A sealed key therefore opens only for the
 * endpoint its owner named: should the URL change without a new key (a race,
 * a hand-edited record), the key fails to open instead of travelling to the
 * new URL.
 */
import { deriveKey, seal, unseal } from '../crypto.js';

/** What reads show instead of a stored key; sent back, it counts as "not given". */
export const MASKED_LLM_API_KEY = '********';

export class OrgLlmKeys {
  private readonly key: Buffer;

  /** @param rootSecret JWT_SECRET, like the other sealers: changing it makes stored keys unreadable */
  constructor(rootSecret: Uint8Array) {
    this.key = deriveKey(rootSecret, 'organization-llm-api-keys');
  }

  seal(orgId: string, baseUrl: string, apiKey: string): string {
    return seal(this.key, apiKey, context(orgId, baseUrl));
  }

  /** @throws when sealed for another organization or base URL, or under another server secret */
  open(orgId: string, baseUrl: string, sealed: string): string {
    return unseal(this.key, sealed, context(orgId, baseUrl));
  }
}

// JSON keeps the two parts apart whatever characters the URL holds
const context = (orgId: string, baseUrl: string): string => `llm-api-key:${JSON.stringify([orgId, baseUrl])}`;

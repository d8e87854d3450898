/**
 * Organization settings: a singleton per organization (LLM provider, embeddings, approval timeout),
 * plus the organization's name, which lives on the organization record.
 *
 * `replace` (PUT) writes the whole desired state: an omitted field goes back to its default, the name stays
 * when omitted. `change` (PATCH) changes only the fields given. The organization's own LLM key follows its
 * `llm_base_url` (gateway/routes/settings.ts says why); it is sealed for that URL.
 */
import type { Collections } from '../collections.js';
import { SETTINGS_DEFAULTS, type SettingsFields } from '../organizations.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import { ServiceError } from '../../runtime/errors.js';
import { MASKED_LLM_API_KEY, OrgLlmKeys } from '../../runtime/llm/index.js';
import { assertEgressAllowed, type EgressGuard } from '../../runtime/net/egress.js';
import { stripUndefined } from '../../runtime/store/documents.js';
import { UniqueViolation, type OrgId, type Patch } from '../../runtime/store/types.js';

/** what a PUT or PATCH body may carry; `llm_api_key` is the plaintext (or the masked value, which does not count) */
export type SettingsInput = {
  readonly [K in keyof Omit<SettingsFields, 'llm_api_key_sealed'>]?: SettingsFields[K] | undefined;
} & {
  readonly organization_name?: string | undefined;
  readonly llm_api_key?: string | null | undefined;
};

export interface OrgSettings {
  readonly settings: SettingsFields;
  readonly organizationName: string;
}

const keyRefused = (message: string): ServiceError =>
  new ServiceError('validation_error', `invalid body: llm_api_key: ${message}`, { issues: [{ path: 'llm_api_key', message }] });

export class SettingsService {
  private readonly keys: OrgLlmKeys;

  constructor(
    private readonly collections: Pick<Collections, 'settings' | 'organizations'>,
    jwtSecret: Uint8Array,
    private readonly egress: EgressGuard,
  ) {
    this.keys = new OrgLlmKeys(jwtSecret);
  }

  async get(org: OrgId): Promise<OrgSettings> {
    return { settings: await this.read(org), organizationName: await this.organizationName(org) };
  }

  /** PUT: omitted fields reset to defaults; the name and the key (while the URL stays) are kept */
  async replace(caller: AuthContext, input: SettingsInput): Promise<OrgSettings> {
    return this.apply(caller, input, await this.patchOf(caller.orgId, input, true));
  }

  /** PATCH: only the fields given change */
  async change(caller: AuthContext, input: SettingsInput): Promise<OrgSettings> {
    return this.apply(caller, input, await this.patchOf(caller.orgId, input, false));
  }

  private async apply(caller: AuthContext, input: SettingsInput, patch: Patch<SettingsFields>): Promise<OrgSettings> {
    // the organization's LLM endpoint is reached for it: a refused literal address is refused now, names when called
    if (typeof input.llm_base_url === 'string') assertEgressAllowed(this.egress, input.llm_base_url, 'llm_base_url');
    // rename first: it is the only step that can be refused after validation
    const organizationName = await this.rename(caller, input.organization_name);
    return { settings: await this.write(caller.orgId, patch), organizationName };
  }

  private async organizationName(org: OrgId): Promise<string> {
    const organization = await this.collections.organizations.get(org);
    if (!organization) throw new ServiceError('not_found', 'organization not found');
    return organization.name;
  }

  /** The stored settings; defaults for an organization provisioned before settings existed. */
  private async read(org: OrgId): Promise<SettingsFields> {
    return (await this.collections.settings.findOne(org, { singleton: true })) ?? SETTINGS_DEFAULTS;
  }

  private async write(org: OrgId, patch: Patch<SettingsFields>): Promise<SettingsFields> {
    const { settings } = this.collections;
    // two tries: a concurrent first write may create the singleton between our read and insert
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const existing = await settings.findOne(org, { singleton: true });
      if (existing) {
        const updated = await settings.update(org, existing.id, patch);
        if (updated) return updated;
        continue;
      }
      try {
        return await settings.insert(org, { singleton: true, ...SETTINGS_DEFAULTS, ...stripUndefined(patch) });
      } catch (error) {
        if (!(error instanceof UniqueViolation)) throw error;
      }
    }
    throw new ServiceError('conflict', 'settings changed concurrently; retry');
  }

  /** renaming is an organization-level change: it also needs `org:manage` */
  private async rename(caller: AuthContext, name: string | undefined): Promise<string> {
    const current = await this.organizationName(caller.orgId);
    if (name === undefined || name === current) return current;
    if (!caller.permissions.has('org:manage')) {
      throw new ServiceError('forbidden', 'renaming the organization needs the permission "org:manage"', { permission: 'org:manage' });
    }
    const renamed = await this.collections.organizations.update(caller.orgId, { name });
    if (!renamed) throw new ServiceError('not_found', 'organization not found');
    return renamed.name;
  }

  /**
   * The sealed key a write leaves for the URL it leaves (undefined: keep the stored one).
   * @throws validation_error naming llm_api_key: a new URL without a new key, or a key without a URL
   */
  private nextSealedKey(org: OrgId, current: SettingsFields, nextUrl: string | null, given: string | null | undefined): string | null | undefined {
    const key = given === MASKED_LLM_API_KEY ? undefined : given;
    if (nextUrl === null) {
      if (typeof key === 'string') {
        throw keyRefused(
          "an organization's own key goes with its own llm_base_url: set llm_base_url in the same request (without one, runs use the operator's endpoint and key)",
        );
      }
      return null;
    }
    if (nextUrl !== current.llm_base_url && typeof key !== 'string') {
      const masked = given === MASKED_LLM_API_KEY ? ' (the masked value does not count)' : '';
      throw keyRefused(`is required when llm_base_url changes: the organization's endpoint needs its own key, given in the same request${masked}`);
    }
    if (key === undefined) return undefined;
    return key === null ? null : this.keys.seal(org, nextUrl, key);
  }

  /** The store patch of a PUT (`whole`) or PATCH body, the key sealed for the URL it goes with. */
  private async patchOf(org: OrgId, input: SettingsInput, whole: boolean): Promise<Patch<SettingsFields>> {
    const { organization_name: _name, llm_api_key: givenKey, ...fields } = input;
    const current = await this.read(org);
    const nextUrl = input.llm_base_url !== undefined ? input.llm_base_url : whole ? null : current.llm_base_url;
    const sealed = this.nextSealedKey(org, current, nextUrl, givenKey);
    if (!whole) {
      // a store patch's `undefined` deletes the field; an omitted PATCH field must stay as it is
      return stripUndefined({ ...fields, llm_api_key_sealed: sealed });
    }
    // a write-only key cannot be read back to be sent again: PUT keeps it while the URL stays
    return { ...SETTINGS_DEFAULTS, ...stripUndefined(fields), llm_api_key_sealed: sealed === undefined ? (current.llm_api_key_sealed ?? null) : sealed };
  }
}

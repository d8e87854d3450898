/**
 * KQL over a realm's context tables (the Context Engine's Advanced tier): the
 * organization's `context_tier` must be `advanced` (403
 * `advanced_tier_required` otherwise), the realm must be the organization's
 * (404 otherwise), and the query runs on the realm's own tables only.
 */
import type { Collections } from '../collections.js';
import type { ContextTables } from '../../ingest/context-tables.js';
import { warmKusto } from '../../ingest/kql/kusto.js';
import type { KqlResult } from '../../ingest/kql/run.js';
import { ServiceError } from '../../runtime/errors.js';
import type { OrgId } from '../../runtime/store/types.js';

export interface KqlRequest {
  readonly query: string;
  readonly realm: string;
  readonly limit: number;
  readonly timeoutMs: number;
}

export class ContextQueryService {
  constructor(
    private readonly collections: Pick<Collections, 'settings' | 'realms'>,
    private readonly tables: ContextTables,
  ) {}

  /**
   * Loads and warms the KQL parser (seconds of CPU, ~200 MB) when some organization uses the Advanced
   * tier, so no request pays it; otherwise the first KQL request does. Resolves with the milliseconds
   * spent, or null when nothing was warmed.
   */
  async warmIfUsed(): Promise<number | null> {
    const advanced = await this.collections.settings.findAcrossOrgs({ context_tier: 'advanced' }, 1);
    return advanced.length === 0 ? null : warmKusto();
  }

  async kql(org: OrgId, request: KqlRequest): Promise<KqlResult> {
    const settings = await this.collections.settings.findOne(org, { singleton: true });
    if ((settings?.context_tier ?? 'basic') !== 'advanced') {
      throw new ServiceError('advanced_tier_required', 'KQL is the Advanced tier of the Context Engine: set context_tier to "advanced" in /settings', {
        setting: 'context_tier',
      });
    }
    const realm = await this.collections.realms.findOne(org, { name: request.realm });
    if (!realm) throw new ServiceError('not_found', `realm ${request.realm} not found`);
    return this.tables.queryKql(org, request.realm, request.query, { limit: request.limit, timeoutMs: request.timeoutMs });
  }
}

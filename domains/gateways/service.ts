/**
 * Gateways as a service: create (api_key sealed), change, delete, look up by
 * id or name (or the organization's default), probe now, and the dispatch log.
 * The REST routes, the dispatcher and the health schedule go through it.
 */
import type { Collections } from '../collections.js';
import { ServiceError } from '../../runtime/errors.js';
import { newId } from '../../runtime/ids.js';
import { getOr404, rejectImmutable, stripUndefined, unique } from '../../runtime/store/documents.js';
import { assertEgressAllowed, type EgressGuard } from '../../runtime/net/egress.js';
import { isoAt, type RuntimeClock } from '../../runtime/clock.js';
import { deriveKey, seal, unseal } from '../../runtime/crypto.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { EngineType, GatewayDispatchDoc, GatewayDoc } from './documents.js';
import type { Engine } from './engines.js';
import { TemporalEngine, temporalTarget } from './temporal.js';
import { WebhookEngine } from './webhook-engine.js';

export interface NewGateway {
  readonly name: string;
  readonly engineType: EngineType;
  readonly baseUrl: string;
  readonly apiKey?: string | undefined;
  readonly isDefault: boolean;
  readonly context: Record<string, unknown>;
  readonly createdBy: string;
}

export interface GatewayPatch {
  readonly name?: string | undefined;
  readonly engine_type?: EngineType | undefined;
  readonly base_url?: string | undefined;
  /** a new key; null removes it */
  readonly api_key?: string | null | undefined;
  readonly is_default?: boolean | undefined;
  readonly context?: Record<string, unknown> | undefined;
}

/** What a read shows instead of the key. */
export const maskKey = (hint: string | null): string | null => (hint === null ? null : `****${hint}`);

const invalid = (path: string, message: string): ServiceError =>
  new ServiceError('validation_error', `invalid body: ${path}: ${message}`, { issues: [{ path, message }] });

export class GatewayService {
  private readonly key: Buffer;
  readonly engines: Readonly<Record<EngineType, Engine>>;

  constructor(
    private readonly collections: Collections,
    rootSecret: Uint8Array,
    readonly egress: EgressGuard,
    readonly clock: RuntimeClock,
  ) {
    this.key = deriveKey(rootSecret, 'gateway-api-keys');
    this.engines = { temporal: new TemporalEngine(egress), webhook: new WebhookEngine(egress) };
  }

  get listing(): Pick<Collections['gateways'], 'list' | 'revision'> {
    return this.collections.gateways;
  }

  get dispatchListing(): Pick<Collections['gatewayDispatches'], 'list' | 'revision'> {
    return this.collections.gatewayDispatches;
  }

  /** the plain key of a gateway, or null when it has none */
  apiKey(org: OrgId, gateway: GatewayDoc): string | null {
    return gateway.api_key_sealed === null ? null : unseal(this.key, gateway.api_key_sealed, `${org}/${gateway.id}`);
  }

  private checkFields(engineType: EngineType, baseUrl: string, apiKey: string | null, context: Record<string, unknown>): void {
    assertEgressAllowed(this.egress, baseUrl, 'base_url');
    if (engineType === 'webhook' && (apiKey === null || apiKey.length < 16)) {
      throw invalid('api_key', 'at least 16 characters, required for engine_type webhook (it signs dispatches and callbacks)');
    }
    if (engineType === 'temporal') temporalTarget(context);
  }

  async create(org: OrgId, input: NewGateway): Promise<GatewayDoc> {
    this.checkFields(input.engineType, input.baseUrl, input.apiKey ?? null, input.context);
    const id = newId('gtw');
    const created = await unique('gateway', () =>
      this.collections.gateways.insert(org, {
        id,
        name: input.name,
        engine_type: input.engineType,
        base_url: input.baseUrl,
        api_key_sealed: input.apiKey === undefined ? null : seal(this.key, input.apiKey, `${org}/${id}`),
        api_key_hint: input.apiKey === undefined ? null : input.apiKey.slice(-4),
        is_default: false,
        context: input.context,
        last_health_status: 'unknown',
        last_health_at: null,
        last_health_error: null,
        created_by: input.createdBy,
      }),
    );
    return input.isDefault ? this.makeDefault(org, created) : created;
  }

  get(org: OrgId, id: string): Promise<GatewayDoc> {
    return getOr404(this.collections.gateways, org, id, 'gateway');
  }

  /** By id, else by name; `default` or null: the organization's default. 404 when none. */
  async resolve(org: OrgId, ref: string | null): Promise<GatewayDoc> {
    const { gateways } = this.collections;
    const found =
      ref === null || ref === 'default'
        ? ((await gateways.findOne(org, { is_default: true })) ?? (ref === null ? null : await gateways.findOne(org, { name: ref })))
        : ((await gateways.get(org, ref)) ?? (await gateways.findOne(org, { name: ref })));
    if (!found) throw new ServiceError('not_found', ref === null || ref === 'default' ? 'the organization has no default gateway' : `gateway ${ref} not found`);
    return found;
  }

  async update(org: OrgId, id: string, patch: GatewayPatch): Promise<GatewayDoc> {
    const gateway = await this.get(org, id);
    rejectImmutable(gateway, patch, ['engine_type']);
    const baseUrl = patch.base_url ?? gateway.base_url;
    // a stored key never follows a moved endpoint: it would go to the new host
    if (baseUrl !== gateway.base_url && gateway.api_key_sealed !== null && patch.api_key === undefined) {
      throw new ServiceError('validation_error', 'invalid body: base_url changed, so the stored api_key is not reused: give api_key again', {
        issues: [{ path: 'api_key', message: 'must be given again when base_url changes' }],
        missing_secrets: ['api_key'],
      });
    }
    const apiKey = patch.api_key === undefined ? this.apiKey(org, gateway) : patch.api_key;
    this.checkFields(gateway.engine_type, baseUrl, apiKey, patch.context ?? gateway.context);
    const endpointChanged = baseUrl !== gateway.base_url || patch.api_key !== undefined;
    const updated = await unique('gateway', () =>
      this.collections.gateways.update(
        org,
        gateway.id,
        stripUndefined({
          name: patch.name,
          base_url: patch.base_url,
          context: patch.context,
          ...(patch.api_key === undefined
            ? {}
            : {
                api_key_sealed: patch.api_key === null ? null : seal(this.key, patch.api_key, `${org}/${gateway.id}`),
                api_key_hint: patch.api_key === null ? null : patch.api_key.slice(-4),
              }),
          // what was probed is no longer what is configured
          ...(endpointChanged ? { last_health_status: 'unknown' as const, last_health_at: null, last_health_error: null } : {}),
          ...(patch.is_default === false ? { is_default: false } : {}),
        }),
      ),
    );
    if (!updated) throw new ServiceError('not_found', `gateway ${id} not found`);
    return patch.is_default === true ? this.makeDefault(org, updated) : updated;
  }

  /** at most one default per organization: setting one clears the other */
  private async makeDefault(org: OrgId, gateway: GatewayDoc): Promise<GatewayDoc> {
    for (const other of await this.collections.gateways.findAll(org, { is_default: true })) {
      if (other.id !== gateway.id) await this.collections.gateways.update(org, other.id, { is_default: false });
    }
    const updated = await this.collections.gateways.update(org, gateway.id, { is_default: true });
    if (!updated) throw new ServiceError('not_found', `gateway ${gateway.id} not found`);
    return updated;
  }

  async delete(org: OrgId, id: string): Promise<void> {
    const gateway = await this.get(org, id);
    await this.collections.gateways.delete(org, gateway.id);
  }

  /** Probes the engine now and stores the verdict. */
  async probe(org: OrgId, gateway: GatewayDoc): Promise<GatewayDoc> {
    const problem = await this.engines[gateway.engine_type].probe(gateway, this.apiKey(org, gateway));
    const updated = await this.collections.gateways.update(org, gateway.id, {
      last_health_status: problem === null ? 'ok' : 'down',
      last_health_at: isoAt(this.clock.now()),
      last_health_error: problem,
    });
    return updated ?? gateway;
  }

  async test(org: OrgId, id: string): Promise<GatewayDoc> {
    return this.probe(org, await this.get(org, id));
  }

  /** one dispatch of the gateway, or 404 (also for another gateway's) */
  async dispatch(org: OrgId, gatewayId: string, dispatchId: string): Promise<GatewayDispatchDoc> {
    const dispatch = await this.collections.gatewayDispatches.get(org, dispatchId);
    if (!dispatch || dispatch.gateway_id !== gatewayId) throw new ServiceError('not_found', `dispatch ${dispatchId} not found`);
    return dispatch;
  }
}

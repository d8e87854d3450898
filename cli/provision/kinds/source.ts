/**
 * `service_source`: a configured connection to an outside system (`/sources`).
 * The REST `connector` is `source_type` here. `config` is sensitive: the API
 * masks its secret fields on read, so refresh puts the applied values back in
 * the masked places (kinds/rest.ts `unmask`) and only a real change shows.
 * Creating a source does not call the outside system (it stays `pending`
 * until `GET /sources/:id/test`).
 */
import type { Attributes, ResourceKind, Value } from '../schema.js';
import { deleteIfPresent, itemPath, readOrNull, unmask } from './rest.js';

type SourceView = {
  id: string;
  name: string;
  connector: string;
  realm: string;
  config: Record<string, Value>;
  schedule: string;
  visibility: string;
  status: string;
  created_at: string;
};

const state = (view: SourceView, config: Value = view.config): Attributes => ({
  id: view.id,
  name: view.name,
  source_type: view.connector,
  realm: view.realm,
  config,
  schedule: view.schedule,
  visibility: view.visibility,
  status: view.status,
  created_at: view.created_at,
});

/** the attributes configuration sets; left-out server defaults are not sent */
const body = (desired: Attributes): Record<string, Value> => {
  const out: Record<string, Value> = { name: desired['name'] ?? null, config: desired['config'] ?? {} };
  for (const name of ['realm', 'schedule', 'visibility']) if (desired[name] !== null && desired[name] !== undefined) out[name] = desired[name];
  return out;
};

export const sourceKind: ResourceKind = {
  name: 'service_source',
  description:
    'A source: a connection to an outside system (code host, build server, ...). Its config is sensitive: kept in state, masked by the API, never shown in plans.',
  attributes: {
    name: { type: 'string', required: true, description: 'unique in the organization, at most 100 characters' },
    source_type: { type: 'string', required: true, immutable: true, description: 'the connector kind (REST `connector`), from `GET /sources/catalog`' },
    realm: { type: 'string', optional: true, computed: true, description: 'the realm the source belongs to (server default: `default`)' },
    config: {
      type: 'json',
      required: true,
      sensitive: true,
      description: "the connector's configuration (credentials included), checked against its config schema",
    },
    schedule: { type: 'string', optional: true, computed: true, description: 'five-field cron for automatic sync; empty string disables' },
    visibility: { type: 'string', optional: true, computed: true, description: '`organization` or `restricted`' },
    status: { type: 'string', computed: true, description: '`pending` until validated, then `synced`, `syncing` or `failed`' },
    created_at: { type: 'string', computed: true, description: 'when the source was created' },
  },
  create: async (api, desired) =>
    state(await api.json<SourceView>('POST', '/sources', { body: { ...body(desired), connector: desired['source_type'] } }), desired['config']),
  read: async (api, id, prior) => {
    const view = await readOrNull<SourceView>(api, itemPath('/sources', id));
    return view && state(view, unmask(view.config, prior?.['config']));
  },
  update: async (api, id, desired) => state(await api.json<SourceView>('PATCH', itemPath('/sources', id), { body: body(desired) }), desired['config']),
  delete: (api, id) => deleteIfPresent(api, itemPath('/sources', id)),
};

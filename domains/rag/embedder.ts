/**
 * Which `/embeddings` endpoint an organization's chunks and queries go to,
 * by the same rule as its model calls: an organization with its own
 * `llm_base_url` uses it with its own sealed `llm_api_key`, through the egress
 * guard; every other organization uses the operator's `EMBEDDING_BASE_URL`
 * with `EMBEDDING_API_KEY`, else `LLM_BASE_URL` with `LLM_API_KEY`. The
 * operator's keys never go to a tenant's URL.
 */
import type { Collections } from '../collections.js';
import { SETTINGS_DEFAULTS } from '../organizations.js';
import type { ServiceConfig } from '../../runtime/config.js';
import { createEmbeddingClient, type EmbeddingClient } from '../../runtime/llm/embeddings.js';
import { LlmError, resolveLlmEndpoint } from '../../runtime/llm/index.js';
import type { RetryOptions } from '../../runtime/llm/retry.js';
import type { NetPort } from '../../connectors/contract.js';
import type { OrgId } from '../../runtime/store/types.js';

/** the model a collection gets when neither the request nor the settings name one */
const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';

export type EmbedderConfig = Pick<ServiceConfig, 'llmBaseUrl' | 'llmApiKey' | 'embeddingBaseUrl' | 'embeddingApiKey' | 'auth'>;

export class Embedders {
  constructor(
    private readonly collections: Pick<Collections, 'settings'>,
    private readonly config: EmbedderConfig,
    private readonly egress: NetPort,
    private readonly retry?: RetryOptions,
  ) {}

  /** the organization's `embedding_model` setting, else the default */
  async defaultModel(org: OrgId): Promise<string> {
    const settings = (await this.collections.settings.findOne(org, { singleton: true })) ?? SETTINGS_DEFAULTS;
    const model = settings.embedding_model?.trim();
    return model === undefined || model === '' ? DEFAULT_EMBEDDING_MODEL : model;
  }

  /** whether `auto_embed_on_ingest` is on for the organization */
  async autoEmbed(org: OrgId): Promise<boolean> {
    const settings = (await this.collections.settings.findOne(org, { singleton: true })) ?? SETTINGS_DEFAULTS;
    return settings.auto_embed_on_ingest;
  }

  /** @throws LlmError `llm_unconfigured` when no key belongs to the endpoint */
  async client(org: OrgId, model: string): Promise<EmbeddingClient> {
    const settings = (await this.collections.settings.findOne(org, { singleton: true })) ?? SETTINGS_DEFAULTS;
    const endpoint = resolveLlmEndpoint(org, settings, this.config);
    const operatorEmbeddings = endpoint.owner === 'operator' && this.config.embeddingBaseUrl !== null;
    const baseUrl = operatorEmbeddings ? this.config.embeddingBaseUrl : endpoint.baseUrl;
    const apiKey = operatorEmbeddings ? this.config.embeddingApiKey : endpoint.apiKey;
    const keyName =
      endpoint.owner === 'organization' ? "the organization's llm_api_key in /settings" : operatorEmbeddings ? 'EMBEDDING_API_KEY' : 'LLM_API_KEY';
    if (apiKey === null || apiKey.trim() === '') throw new LlmError('llm_unconfigured', `no embeddings endpoint is configured: missing ${keyName}`);
    return createEmbeddingClient({
      baseUrl,
      apiKey,
      keyName,
      model,
      // only a tenant-chosen URL goes through the egress guard; the operator's endpoints are trusted configuration
      fetch: endpoint.owner === 'organization' ? this.egress.fetch : undefined,
      ...(this.retry === undefined ? {} : { retry: this.retry }),
    });
  }
}

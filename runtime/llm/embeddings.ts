/**
 * The OpenAI-compatible `/embeddings` adapter (official `openai` client):
 * texts go in batches, each batch retried on 429 (honouring `Retry-After`),
 * 408/409/5xx and connection failures by the same loop as model turns. Every
 * vector must have the dimension the caller expects: a provider answering
 * another size is a clear `embedding_dimension_mismatch`, never a silently
 * truncated vector.
 */
import OpenAI from 'openai';
import { openAiSdkClient } from './openai-provider.js';
import { withRetry, type RetryOptions } from './retry.js';
import { toAttemptError } from './sdk-errors.js';
import { LlmError } from './types.js';

/** how many texts one `/embeddings` request carries. @default 64 */
const EMBEDDING_BATCH_SIZE = 64;

export interface EmbeddingClientOptions {
  /** null: the official API */
  readonly baseUrl: string | null;
  readonly apiKey: string;
  /** what a 401/403 tells the reader to check */
  readonly keyName: string;
  readonly model: string;
  /** the egress guard's fetch for a tenant-chosen URL */
  readonly fetch?: typeof fetch | undefined;
  readonly retry?: RetryOptions;
  readonly batchSize?: number;
  readonly timeoutMs?: number;
}

export interface EmbeddingClient {
  readonly model: string;
  /**
   * One vector per text, in order.
   * @param dimension when given, every vector must have it (else `embedding_dimension_mismatch`)
   * @throws LlmError (`llm_rate_limited` after the retries, `llm_auth_failed`, `llm_unreachable`, ...)
   */
  embed(texts: readonly string[], options?: { readonly dimension?: number; readonly signal?: AbortSignal }): Promise<Float32Array[]>;
}

/** Thrown when the provider's vectors do not have the collection's dimension. */
export class EmbeddingDimensionError extends Error {
  constructor(
    readonly expected: number,
    readonly actual: number,
    readonly model: string,
  ) {
    super(`embedding model "${model}" answered vectors of dimension ${actual}, but this collection was created with dimension ${expected}`);
    this.name = 'EmbeddingDimensionError';
  }
}

export function createEmbeddingClient(options: EmbeddingClientOptions): EmbeddingClient {
  const { client, baseUrl } = openAiSdkClient(options, 60_000);
  const batchSize = Math.max(1, options.batchSize ?? EMBEDDING_BATCH_SIZE);

  async function batch(texts: string[], signal: AbortSignal | undefined): Promise<number[][]> {
    const once = async function* (): AsyncGenerator<number[][]> {
      try {
        const answer = await client.embeddings.create({ model: options.model, input: texts, encoding_format: 'float' }, { signal });
        const vectors: number[][] = new Array<number[]>(texts.length);
        for (const item of answer.data) vectors[item.index] = item.embedding;
        if (vectors.some((vector) => !Array.isArray(vector)))
          throw new LlmError('llm_provider_error', `the embeddings answer of ${baseUrl} lacks vectors for some inputs`);
        yield vectors;
      } catch (error) {
        if (error instanceof LlmError) throw error;
        throw toAttemptError(error, 'embeddings', baseUrl, options.keyName, OpenAI);
      }
    };
    for await (const vectors of withRetry('embeddings', once, signal, options.retry)) return vectors;
    throw new LlmError('llm_provider_error', `the embeddings request to ${baseUrl} answered nothing`);
  }

  return {
    model: options.model,
    async embed(texts, { dimension, signal } = {}) {
      const out: Float32Array[] = [];
      for (let at = 0; at < texts.length; at += batchSize) {
        const vectors = await batch(texts.slice(at, at + batchSize), signal);
        for (const vector of vectors) {
          if (dimension !== undefined && vector.length !== dimension) throw new EmbeddingDimensionError(dimension, vector.length, options.model);
          out.push(Float32Array.from(vector));
        }
      }
      return out;
    },
  };
}

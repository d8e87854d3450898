/** The platform's embedding and parsing failures as the errors /rag answers (and the reasons failed documents carry). */
import { EmbeddingDimensionError } from '../../runtime/llm/embeddings.js';
import { LlmError } from '../../runtime/llm/index.js';
import { ServiceError } from '../../runtime/errors.js';
import { egressRefusalOf } from '../../runtime/net/egress.js';
import { UnreadableDocumentError } from '../../runtime/rag/extract.js';

/** A ServiceError for what embedding (or reading) a text threw; anything else is passed on as it is. */
export function ragErrorOf(error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  if (error instanceof EmbeddingDimensionError)
    return new ServiceError('embedding_dimension_mismatch', error.message, { expected: error.expected, actual: error.actual, model: error.model });
  const refusal = egressRefusalOf(error);
  if (refusal !== null) return new ServiceError('egress_refused', refusal.message, { ...refusal.details });
  if (error instanceof LlmError) {
    if (error.code === 'llm_unconfigured') return new ServiceError('llm_unconfigured', error.message);
    return new ServiceError('embedding_failed', `embeddings: ${error.message}`, { cause: error.code });
  }
  if (error instanceof UnreadableDocumentError) return new ServiceError('validation_error', error.message);
  return error;
}

/** One line saying why a document could not be indexed (what `failed` documents show as `reason`). */
export function failureReason(error: unknown): string {
  const mapped = ragErrorOf(error);
  if (mapped instanceof ServiceError) return `${mapped.code}: ${mapped.message}`;
  if (error instanceof UnreadableDocumentError) return error.message;
  return `internal_error: ${error instanceof Error ? error.message : String(error)}`;
}

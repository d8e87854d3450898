/** Schemas and presenters of /pipelines, its versions and runs (shared with /pipeline-agent). */
import { z } from 'zod';
import type { PipelineDoc, PipelineRunDoc, PipelineRunEntryDoc, PipelineVersionDoc } from '../../domains/pipelines/documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { storedSchema } from '../resource.js';

export const definition = z.record(z.string(), z.unknown());

export const pipelineSchema = z.object({
  ...storedSchema,
  name: z.string(),
  description: z.string().nullable(),
  realm: z.string(),
  definition,
  version: z.number().int(),
});
export const versionSchema = z.object({
  id: z.string(),
  pipeline_id: z.string(),
  version: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  realm: z.string(),
  definition,
  created_by: z.string(),
  created_at: z.string(),
  message: z.string().nullable(),
  reverted_from: z.number().int().nullable(),
});
export const entrySchema = z.object({
  seq: z.number().int(),
  kind: z.enum(['log', 'progress']),
  level: z.string(),
  message: z.string().nullable(),
  phase: z.string().nullable(),
  fraction: z.number().nullable(),
  at: z.string(),
});
export const runSchema = z.object({
  ...storedSchema,
  pipeline_id: z.string(),
  pipeline_version: z.number().int(),
  status: z.enum(['running', 'succeeded', 'failed', 'cancelled']),
  parameters: z.record(z.string(), z.unknown()),
  progress: z.object({ fraction: z.number(), message: z.string().nullable(), phase: z.string().nullable(), at: z.string() }).nullable(),
  phase: z.string().nullable(),
  log_count: z.number().int(),
  started_by: z.string(),
  token_expires_at: z.string(),
  finished_at: z.string().nullable(),
  error: z.string().nullable(),
});

export const present = (pipeline: PipelineDoc) => ({
  id: pipeline.id,
  name: pipeline.name,
  description: pipeline.description,
  realm: pipeline.realm,
  definition: pipeline.definition,
  version: pipeline.version,
  created_at: pipeline.created_at,
  updated_at: pipeline.updated_at,
});

export const presentVersion = (version: PipelineVersionDoc) => ({
  id: version.id,
  pipeline_id: version.pipeline_id,
  version: version.version,
  name: version.name,
  description: version.description,
  realm: version.realm,
  definition: version.definition,
  created_by: version.created_by,
  created_at: version.created_at,
  message: version.message,
  reverted_from: version.reverted_from,
});

export const presentRun = (run: PipelineRunDoc) => ({
  id: run.id,
  pipeline_id: run.pipeline_id,
  pipeline_version: run.pipeline_version,
  status: run.status,
  parameters: run.parameters,
  progress: run.progress,
  phase: run.phase,
  log_count: run.log_count,
  started_by: run.started_by,
  token_expires_at: run.token_expires_at,
  finished_at: run.finished_at,
  error: run.error,
  created_at: run.created_at,
  updated_at: run.updated_at,
});

export const presentEntry = (entry: PipelineRunEntryDoc) => ({
  seq: entry.seq,
  kind: entry.kind,
  level: entry.level,
  message: entry.message,
  phase: entry.phase,
  fraction: entry.fraction,
  at: entry.created_at,
});

/** `ETag: "<version>"` of a pipeline: what If-Match names */
export const etagOf = (pipeline: PipelineDoc): Record<string, string> => ({ etag: `"${pipeline.version}"` });

/**
 * The version the caller expects, from `If-Match` (`"3"`, `W/"3"` or `3`;
 * `*` names none) and/or the body's `expected_version`; both given must agree.
 */
export function expectedVersion(headers: Readonly<Record<string, string>>, fromBody: number | undefined): number | undefined {
  const raw = headers['if-match']?.trim();
  let fromHeader: number | undefined;
  if (raw !== undefined && raw !== '' && raw !== '*') {
    const match = /^(?:W\/)?"?(\d{1,9})"?$/.exec(raw);
    if (!match) throw new ServiceError('validation_error', 'If-Match names a pipeline version, e.g. "3"', { field: 'If-Match' });
    fromHeader = Number(match[1]);
  }
  if (fromHeader !== undefined && fromBody !== undefined && fromHeader !== fromBody) {
    throw new ServiceError('validation_error', 'If-Match and expected_version name different versions', { field: 'expected_version' });
  }
  return fromHeader ?? fromBody;
}

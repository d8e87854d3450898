/**
 * A copy-ready connector plugin: a notes API with a token. Copy this folder,
 * rename the kind, replace client.ts and the tools; keep the shape. See
 * README.md here for the steps, and run the conformance kit with
 * `npx tsx connectors/conformance/cli.ts connectors/template/index.ts`.
 */
import { ToolError, type ConnectorPlugin } from './sdk.js';
import { notesApi, type NotesConfig } from './client.js';
import { createNote } from './tools/create-note.js';
import { listNotes } from './tools/list-notes.js';

export const plugin: ConnectorPlugin = {
  kind: 'notes_template',
  version: '0.1.0',
  contract: '^1',
  description: 'Notes (template connector): list and write notes of a workspace.',
  configSchema: {
    type: 'object',
    properties: {
      base_url: { type: 'string', format: 'uri', description: 'the API root, e.g. https://notes.example.com/api' },
      // writeOnly: the service masks it on every read of the source
      token: { type: 'string', minLength: 1, writeOnly: true },
      workspace: { type: 'string', minLength: 1 },
    },
    required: ['base_url', 'token', 'workspace'],
    additionalProperties: false,
  },
  // bad credentials fail here (GET /sources/:id/test answers 422 with these details), not at the first tool call
  async validate(raw, signal, net) {
    const config = raw as unknown as NotesConfig;
    try {
      await notesApi(config, `/workspaces/${config.workspace}`, { signal, net });
      return { ok: true };
    } catch (error) {
      if (ToolError.is(error)) return { ok: false, message: error.message, details: { ...error.details, reason: error.code } };
      // anything else is a network failure (or a bug): its raw text means nothing to the person fixing the source
      return { ok: false, message: 'the notes API could not be reached at base_url', details: { reason: 'unreachable' } };
    }
  },
  tools: [listNotes, createNote],
  // optional ETL: what the system holds, written into the context graph
  async sync(ctx) {
    const config = ctx.config as unknown as NotesConfig;
    const notes = (await notesApi(config, `/workspaces/${config.workspace}/notes?limit=100`, ctx)) as { id: string; title: string }[];
    await ctx.graph?.upsertNodes(notes.map((note) => ({ label: 'Note', properties: { _key: note.id, title: note.title } })));
    ctx.progress(1, `${notes.length} notes`);
    return { nodes: notes.length, relationships: 0, details: { notes: notes.length } };
  },
};

export default plugin;

import type { ConnectorTool } from '../sdk.js';
import { notesApi, type NotesConfig } from '../client.js';

export const listNotes: ConnectorTool = {
  name: 'list_notes',
  description: 'Lists the notes of the workspace, newest first. Use it to find what was written about a topic; returns {notes: [{id, title, updated_at}]}.',
  input_schema: {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: 200, description: 'words the title must contain' },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    },
    additionalProperties: false,
  },
  effect: 'read',
  async run(args, ctx) {
    const config = ctx.config as unknown as NotesConfig;
    const params = new URLSearchParams({ limit: String(args['limit']) });
    if (typeof args['query'] === 'string') params.set('q', args['query']);
    const notes = (await notesApi(config, `/workspaces/${config.workspace}/notes?${params}`, ctx)) as unknown[];
    return { notes };
  },
};

import type { ConnectorTool } from '../sdk.js';
import { notesApi, type NotesConfig } from '../client.js';

export const createNote: ConnectorTool = {
  name: 'create_note',
  description: 'Writes a new note in the workspace. A write: a person may have to approve it first. Returns the created {id, title}.',
  input_schema: {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 200 },
      body: { type: 'string', maxLength: 20_000 },
    },
    required: ['title'],
    additionalProperties: false,
  },
  effect: 'write',
  async run(args, ctx) {
    const config = ctx.config as unknown as NotesConfig;
    return notesApi(config, `/workspaces/${config.workspace}/notes`, ctx, { method: 'POST', body: { title: args['title'], body: args['body'] ?? '' } });
  },
};

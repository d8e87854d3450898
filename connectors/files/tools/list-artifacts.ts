/** files.list_artifacts: the files this run has written so far (`files.write_artifact`). */
import { portOf, type ConnectorTool } from '../../contract.js';
import { requireRunId } from '../run-id.js';

export function listArtifactsTool(): ConnectorTool {
  return {
    name: 'list_artifacts',
    effect: 'read',
    description:
      'List the files this run has written with files.write_artifact so far: each with its stored path, size in bytes, ' +
      'content type and modification time. Use it to check what is already there before writing or replacing a file.',
    input_schema: { type: 'object', properties: {}, additionalProperties: false },
    run: async (_args, ctx) => {
      ctx.signal.throwIfAborted();
      const runId = requireRunId(ctx);
      return { artifacts: await portOf(ctx, 'files').listArtifacts(runId) };
    },
  };
}

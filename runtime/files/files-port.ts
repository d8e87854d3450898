/**
 * The `files` port of the connector contract over the file store: the
 * artifacts of agent runs, bound to the call's organization. The store's
 * refusals (a path that climbs out, a file where a folder should be) reach
 * the tool as ToolErrors with the store's code and message.
 */
import type { FilesPort, PortScope, StoredFile } from '../../connectors/contract.js';
import { asOrgId } from '../store/types.js';
import { asToolErrors, toolErrorOf } from '../tools/ports.js';
import { artifactPath, listArtifacts } from './artifacts.js';
import type { FileStore } from './store.js';

export function filesPort(files: FileStore): (scope: PortScope) => FilesPort {
  return (call) => {
    const org = asOrgId(call.orgId);
    return {
      checkArtifactName: (runId, name) => {
        try {
          artifactPath(runId, name);
        } catch (error) {
          throw toolErrorOf(error);
        }
      },
      writeArtifact: (runId, name, content) =>
        asToolErrors(async (): Promise<StoredFile> => {
          const { path, size, content_type, modified_at } = await files.write(org, artifactPath(runId, name), content);
          return { path, size, content_type, modified_at };
        }),
      listArtifacts: (runId) => asToolErrors(() => listArtifacts(files, org, runId)),
    };
  };
}

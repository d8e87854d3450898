import { ToolError, type MemoryPort } from '../contract.js';

/** Like `POST /memory`: the realm must exist in the organization; the model gets `invalid_arguments` naming it. */
export async function requireRealm(memory: MemoryPort, realm: string): Promise<void> {
  if (await memory.realmExists(realm)) return;
  throw new ToolError('invalid_arguments', `realm "${realm}" does not exist in this organization`, {
    issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
  });
}

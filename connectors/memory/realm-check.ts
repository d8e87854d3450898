import { ToolError } from '../contract.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { MemoryPluginStores } from './stores.js';

/** Like `POST /memory`: the realm must exist in the organization; the model gets `invalid_arguments` naming it. */
export async function requireRealm(stores: MemoryPluginStores, org: OrgId, realm: string): Promise<void> {
  if (await stores.realms.findOne(org, { name: realm })) return;
  throw new ToolError('invalid_arguments', `realm "${realm}" does not exist in this organization`, {
    issues: [{ path: 'realm', message: `no realm named "${realm}"` }],
  });
}

/** The decision log masks argument values whose keys look like secrets, at any depth. */
import { describe, expect, it } from 'vitest';
import { maskSecrets, policyInput } from '../../domains/policies/gate.js';

describe('maskSecrets', () => {
  it('masks token/secret/password/key values at any depth and keeps the rest', () => {
    const input = policyInput(
      {
        name: 'github.create_issue',
        connector: 'github',
        effect: 'write',
        orgId: 'org_1',
        args: { title: 'x', api_key: 'sk_live', nested: { Password: 'hunter2', list: [{ access_token: 't', n: 1 }] }, client_secret: 's' },
      },
      { user: 'usr_1' },
    );
    expect(maskSecrets(input)).toEqual({
      subject: { task: null, binding: null, user: 'usr_1' },
      resource: {
        connector: 'github',
        tool: 'github.create_issue',
        tool_effect: 'write',
        args: { title: 'x', api_key: '****', nested: { Password: '****', list: [{ access_token: '****', n: 1 }] }, client_secret: '****' },
      },
      action: 'write',
    });
    // the input the policies saw is left as it was
    expect((input['resource'] as { args: { api_key: string } }).args.api_key).toBe('sk_live');
  });
});

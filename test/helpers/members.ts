/**
 * Adds a member to an organization the way a person would: the owner invites
 * an email with a role, the invitee accepts with a password. Suites that need
 * a `member`, `viewer`, `admin` or custom-role caller use this.
 */
import { randomBytes } from 'node:crypto';
import type { Session, TestServer } from './server.js';

export async function addMember(server: TestServer, inviter: Session, role: string, email?: string): Promise<Session> {
  const address = email ?? `${role}-${randomBytes(4).toString('hex')}@example.test`;
  const password = 'member password 1234';
  const invite = await server.request('POST', '/platform/invites', { token: inviter.token, body: { email: address, role } });
  if (invite.status !== 201) throw new Error(`invite failed: ${invite.status} ${invite.text}`);
  const accepted = await server.request('POST', '/auth/invites/accept', { body: { token: invite.body.token, password } });
  if (accepted.status !== 201) throw new Error(`accept failed: ${accepted.status} ${accepted.text}`);
  return { ...(accepted.body as Omit<Session, 'email' | 'password'>), email: address, password };
}

/** Creates the custom role `name` with these permissions and adds a member holding it; returns the member and the role's id. */
export async function memberWithCustomRole(
  server: TestServer,
  owner: Session,
  name: string,
  permissions: readonly string[],
): Promise<{ member: Session; roleId: string }> {
  const role = await server.request('POST', '/roles', { token: owner.token, body: { name, permissions } });
  if (role.status !== 201) throw new Error(`role failed: ${role.status} ${role.text}`);
  return { member: await addMember(server, owner, name), roleId: role.body.id as string };
}

/** An API key of `token`'s holder with these permissions; returns its plaintext. */
export async function apiKeyWith(server: TestServer, token: string, permissions: readonly string[]): Promise<string> {
  const created = await server.request('POST', '/api-keys', { token, body: { name: `key ${permissions.join(' ')}`.slice(0, 100), permissions } });
  if (created.status !== 201) throw new Error(`api key failed: ${created.status} ${created.text}`);
  return created.body.key as string;
}

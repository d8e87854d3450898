/**
 * The platform around organizations: the organizations a user belongs to, invites into one (tokens are
 * answered once and stored as their sha256, single-use, valid seven days), and for platform operators
 * (PLATFORM_OPERATORS) every user of the service.
 */
import type { Collections } from '../collections.js';
import { assignableRole, type GrantCheck } from '../roles/service.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import { IdentityService, normalizeEmail } from '../../runtime/auth/identity.js';
import { isoAt, type RuntimeClock } from '../../runtime/clock.js';
import type { InviteDoc, UserDoc } from '../../runtime/collections.js';

export type { InviteDoc };
import { ServiceError } from '../../runtime/errors.js';
import { getOr404 } from '../../runtime/store/documents.js';
import type { OrgId } from '../../runtime/store/types.js';

const INVITE_TTL_MS = 7 * 86_400_000;
/** the login lookup reads at most this many memberships of one user */
const MAX_MEMBERSHIPS = 1000;

export interface UserOrganization {
  readonly id: string;
  readonly name: string;
  readonly role: string;
  readonly joined_at: string;
}

/** a user with the organizations they belong to (sorted by id) and their role there */
export interface PlatformUser {
  readonly user: UserDoc;
  readonly organizations: UserOrganization[];
}

const byId = (a: { readonly id: string }, b: { readonly id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class PlatformService {
  private readonly operators: ReadonlySet<string>;

  constructor(
    private readonly collections: Pick<Collections, 'invites' | 'memberships' | 'organizations' | 'users' | 'roles'>,
    operators: readonly string[],
    private readonly clock: Pick<RuntimeClock, 'now'>,
  ) {
    this.operators = new Set(operators);
  }

  /** the invites as a read-only listing (pages are cached on its revision) */
  get invites(): Pick<Collections['invites'], 'list' | 'revision'> {
    return this.collections.invites;
  }

  /** 403 unless the user is one PLATFORM_OPERATORS names */
  async assertOperator(userId: string): Promise<void> {
    const caller = await this.collections.users.get(userId);
    if (!caller || !this.operators.has(caller.email)) {
      throw new ServiceError('forbidden', 'only platform operators (PLATFORM_OPERATORS) may read the users of every organization');
    }
  }

  /** every user, oldest first; `after` is the last id of the previous page */
  async listUsers(limit: number, after: string | null): Promise<{ readonly users: PlatformUser[]; readonly more: boolean; readonly total: number }> {
    // users are global records without a paged list: ids sort by creation, so the keyset cursor is the last id
    const all = (await this.collections.users.findAll()).sort(byId);
    const rest = after === null ? all : all.filter((user) => user.id > after);
    const page = rest.slice(0, limit);
    return { users: await this.withOrganizations(page), more: rest.length > page.length, total: all.length };
  }

  async getUser(id: string): Promise<PlatformUser> {
    const user = await this.collections.users.get(id);
    if (!user) throw new ServiceError('not_found', `user ${id} not found`);
    const [found] = await this.withOrganizations([user]);
    if (!found) throw new ServiceError('not_found', `user ${id} not found`);
    return found;
  }

  /** the organizations the user belongs to, with their role there */
  async organizationsOf(userId: string): Promise<Omit<UserOrganization, 'joined_at'>[]> {
    const mine = await this.collections.memberships.findAcrossOrgs({ user_id: userId }, MAX_MEMBERSHIPS);
    const found = await this.collections.organizations.findAll({ id: { in: mine.map((membership) => membership.org_id) } });
    const names = new Map(found.map((organization) => [organization.id, organization.name]));
    return mine.flatMap((membership) => {
      const name = names.get(membership.org_id);
      return name === undefined ? [] : [{ id: membership.org_id, name, role: membership.role }];
    });
  }

  /** refused for a member already in, or an email with a pending invite; the plaintext token is returned once */
  async invite(
    caller: AuthContext,
    rawEmail: string,
    roleName: string,
    checkGrant: GrantCheck,
  ): Promise<{ readonly invite: InviteDoc; readonly token: string }> {
    const { invites, memberships, users } = this.collections;
    const org = caller.orgId;
    const role = await assignableRole(this.collections.roles, caller, roleName, checkGrant);
    const email = normalizeEmail(rawEmail);
    const existing = await users.findOne({ email });
    if (existing && (await memberships.findOne(org, { user_id: existing.id }))) {
      throw new ServiceError('conflict', 'this user already belongs to the organization', { fields: ['email'] });
    }
    const open = await invites.findAll(org, { email, accepted_at: null });
    if (open.some((invite) => Date.parse(invite.expires_at) > this.clock.now())) {
      throw new ServiceError('conflict', 'a pending invite for this email exists; revoke it first', { fields: ['email'] });
    }
    const { token, hash } = IdentityService.newInviteToken();
    const invite = await invites.insert(org, {
      email,
      role: role.name,
      token_hash: hash,
      expires_at: isoAt(this.clock.now() + INVITE_TTL_MS),
      invited_by: caller.userId,
      accepted_at: null,
    });
    return { invite, token };
  }

  /** an accepted invite stays (it is the record of who joined how) */
  async revokeInvite(org: OrgId, id: string): Promise<void> {
    const invite = await getOr404(this.collections.invites, org, id, 'invite');
    if (invite.accepted_at !== null) throw new ServiceError('conflict', 'this invite was already accepted', { id: invite.id });
    await this.collections.invites.delete(org, invite.id);
  }

  private async withOrganizations(found: readonly UserDoc[]): Promise<PlatformUser[]> {
    if (found.length === 0) return [];
    const { memberships, organizations } = this.collections;
    const mine = await memberships.findAcrossOrgs({ user_id: { in: found.map((user) => user.id) } }, found.length * MAX_MEMBERSHIPS);
    const orgs = await organizations.findAll({ id: { in: [...new Set(mine.map((membership) => membership.org_id))] } });
    const names = new Map(orgs.map((organization) => [organization.id, organization.name]));
    return found.map((user) => ({
      user,
      organizations: mine
        .filter((membership) => membership.user_id === user.id && names.has(membership.org_id))
        .map((membership) => ({ id: membership.org_id, name: names.get(membership.org_id) ?? '', role: membership.role, joined_at: membership.created_at }))
        .sort(byId),
    }));
  }
}

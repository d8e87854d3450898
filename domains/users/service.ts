/**
 * The members of an organization. Removing a member deletes the membership, not the user (who may
 * belong elsewhere). An organization always keeps at least one owner; only an owner changes an owner.
 */
import type { Collections } from '../collections.js';
import { assignableRole, type GrantCheck } from '../roles/service.js';
import type { AuthContext } from '../../runtime/auth/context.js';
import type { MembershipDoc, OrganizationDoc, UserDoc } from '../../runtime/collections.js';
import { ServiceError } from '../../runtime/errors.js';
import type { ListOptions, OrgId } from '../../runtime/store/types.js';

export interface Member {
  readonly membership: MembershipDoc;
  readonly user: UserDoc;
}

export class UserService {
  constructor(private readonly collections: Pick<Collections, 'memberships' | 'users' | 'roles' | 'organizations'>) {}

  /** the signed-in caller's user and organization; 401 `unauthorized` when either is gone */
  async caller(userId: string, org: OrgId): Promise<{ readonly user: UserDoc; readonly organization: OrganizationDoc }> {
    const user = await this.collections.users.get(userId);
    const organization = await this.collections.organizations.get(org);
    if (!user || !organization) throw new ServiceError('unauthorized', 'the caller no longer exists');
    return { user, organization };
  }

  /** one page of memberships with their users (a membership whose user is gone is left out) */
  async list(org: OrgId, options: ListOptions): Promise<{ readonly members: Member[]; readonly nextAfter: string | null; readonly total: number }> {
    const page = await this.collections.memberships.list(org, options);
    const found = await this.collections.users.findAll({ id: { in: page.items.map((membership) => membership.user_id) } });
    const byId = new Map(found.map((user) => [user.id, user]));
    const members = page.items.flatMap((membership) => {
      const user = byId.get(membership.user_id);
      return user ? [{ membership, user }] : [];
    });
    return { members, nextAfter: page.nextAfter, total: page.total };
  }

  /** the membership and user behind a user id, or 404 (also for a user of another organization) */
  async get(org: OrgId, userId: string): Promise<Member> {
    const membership = await this.collections.memberships.findOne(org, { user_id: userId });
    const user = membership ? await this.collections.users.get(userId) : null;
    if (!membership || !user) throw new ServiceError('not_found', `user ${userId} not found`);
    return { membership, user };
  }

  async changeRole(caller: AuthContext, userId: string, roleName: string, checkGrant: GrantCheck): Promise<Member> {
    const org = caller.orgId;
    const { membership, user } = await this.get(org, userId);
    const role = await assignableRole(this.collections.roles, caller, roleName, checkGrant);
    if (role.name !== membership.role) await this.guardOwner(caller, membership, 'demote');
    const updated = await this.collections.memberships.update(org, membership.id, { role: role.name });
    if (!updated) throw new ServiceError('not_found', `user ${userId} not found`);
    return { membership: updated, user };
  }

  async remove(caller: AuthContext, userId: string): Promise<void> {
    const { membership } = await this.get(caller.orgId, userId);
    await this.guardOwner(caller, membership, 'remove');
    await this.collections.memberships.delete(caller.orgId, membership.id);
  }

  /** owners are changed only by owners, and the last one stays */
  private async guardOwner(caller: AuthContext, membership: MembershipDoc, action: string): Promise<void> {
    if (membership.role !== 'owner') return;
    if (!(caller.kind === 'user' && caller.role === 'owner')) throw new ServiceError('forbidden', `only an owner can ${action} an owner`);
    if ((await this.collections.memberships.count(caller.orgId, { role: 'owner' })) <= 1) {
      throw new ServiceError('conflict', `the last owner cannot be ${action === 'remove' ? 'removed' : 'demoted'}; make someone else owner first`);
    }
  }
}

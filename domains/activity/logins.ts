/**
 * Logins in the audit log. A success is recorded in the organization signed
 * into; a wrong password of a known email in each organization the user
 * belongs to (the one named by `organization_id`, when it is one of them). An
 * unknown email belongs to no organization and is not recorded (the login
 * throttle and the request log still see it), and refusals of a locked
 * account are not either, so a password-guessing storm cannot flood the log.
 */
import type { Collections } from '../collections.js';
import type { OrgId } from '../../runtime/store/types.js';
import type { ActivityRecorder } from './record.js';

export interface LoginAttempt {
  readonly email: string;
  readonly organizationId?: string | undefined;
  readonly requestId: string;
  readonly route: string;
}

interface Signed {
  readonly user: { readonly id: string; readonly email: string };
  readonly organization: { readonly id: string };
}

/** what /auth records of logins and registrations */
export class LoginAudit {
  constructor(
    private readonly recorder: ActivityRecorder,
    private readonly collections: Pick<Collections, 'users' | 'memberships'>,
  ) {}

  /** a login, or (`register`) the organization a registration created */
  async succeeded(attempt: LoginAttempt, result: Signed, status: number, action: 'login' | 'register' = 'login'): Promise<void> {
    await this.recorder.audit(result.organization.id as OrgId, {
      actor: { type: 'user', id: result.user.id, email: result.user.email },
      action,
      resource: action === 'login' ? { kind: 'session', id: null } : { kind: 'organization', id: result.organization.id },
      route: attempt.route,
      status,
      requestId: attempt.requestId,
    });
  }

  /** never throws: the caller is answering the login's own error */
  async failed(attempt: LoginAttempt, status: number, code: string): Promise<void> {
    const user = await this.collections.users.findOne({ email: attempt.email }).catch(() => null);
    if (!user) return;
    const memberships = await this.collections.memberships.findAcrossOrgs({ user_id: user.id }, 1000).catch(() => []);
    const named = memberships.filter((membership) => membership.org_id === attempt.organizationId);
    for (const membership of named.length > 0 ? named : memberships) {
      await this.recorder.audit(membership.org_id, {
        actor: { type: 'user', id: user.id, email: user.email },
        action: 'login_failed',
        resource: { kind: 'session', id: null },
        route: attempt.route,
        status,
        requestId: attempt.requestId,
        details: { reason: code },
      });
    }
  }
}

/**
 * Skills: instructions agents can load, with an approval workflow (the rules are described in
 * gateway/routes/skills.ts). A `user` skill is seen only by its owner: to anyone else it does not exist.
 */
import type { Collections } from '../collections.js';
import type { SkillDoc, SkillStatus } from './documents.js';
import { ServiceError } from '../../runtime/errors.js';
import { nowIso } from '../../runtime/ids.js';
import { rejectImmutable, stripUndefined, unique } from '../../runtime/store/documents.js';
import type { OrgId, Patch, StoredFields } from '../../runtime/store/types.js';

/** who acts: the user (or the user behind an API key) and their role */
export interface SkillActor {
  readonly userId: string;
  readonly role: string;
}

export type SkillFields = Pick<SkillDoc, 'name' | 'slug' | 'description' | 'version' | 'tags' | 'content' | 'scope'>;

/** slug and scope are accepted so a change answers `immutable_field` */
export type SkillPatch = { readonly [K in keyof Omit<SkillFields, 'scope'>]?: SkillFields[K] | undefined } & {
  readonly scope?: string | undefined;
};

type Action = 'submit' | 'approve' | 'reject';
const TRANSITIONS: Readonly<Record<Action, { readonly from: readonly SkillStatus[]; readonly to: SkillStatus }>> = {
  submit: { from: ['draft', 'rejected'], to: 'pending_approval' },
  approve: { from: ['pending_approval'], to: 'approved' },
  reject: { from: ['pending_approval'], to: 'rejected' },
};

/** the list filter for what a user may see: org skills and their own user skills */
export const visibleTo = (userId: string) => ({ in: ['org', userId] });

function checkTransition(skill: SkillDoc, action: Action): SkillStatus {
  const { from, to } = TRANSITIONS[action];
  if (!from.includes(skill.status)) {
    throw new ServiceError('conflict', `cannot ${action} a skill in status ${skill.status}`, {
      status: skill.status,
      action,
      allowed_from: from,
    });
  }
  return to;
}

/** four eyes: not the submitter, unless an owner (a one-person organization approves its own) */
function checkReviewer(skill: SkillDoc, actor: SkillActor): void {
  if (skill.submitted_by === actor.userId && actor.role !== 'owner') {
    throw new ServiceError('forbidden', 'a skill must be reviewed by someone other than its submitter (owners excepted)', {
      reason: 'own_submission',
    });
  }
}

export class SkillService {
  constructor(private readonly collections: Pick<Collections, 'skills'>) {}

  /** the collection as a read-only listing (pages are cached on its revision) */
  get listing(): Pick<Collections['skills'], 'list' | 'revision'> {
    return this.collections.skills;
  }

  create(org: OrgId, actor: SkillActor, fields: SkillFields): Promise<SkillDoc> {
    const owner = fields.scope === 'user' ? actor.userId : null;
    return unique('skill', () =>
      this.collections.skills.insert(org, {
        ...fields,
        owner_user_id: owner,
        visible_to: owner ?? 'org',
        status: 'draft',
        created_by: actor.userId,
        submitted_by: null,
        reviewed_by: null,
        reviewed_at: null,
        review_note: null,
      }),
    );
  }

  /** by id or slug, or 404 (also for another user's private skill) */
  async get(org: OrgId, actor: SkillActor, idOrSlug: string): Promise<SkillDoc> {
    const { skills } = this.collections;
    const skill = (await skills.get(org, idOrSlug)) ?? (await skills.findOne(org, { slug: idOrSlug }));
    if (!skill || (skill.scope === 'user' && skill.owner_user_id !== actor.userId)) {
      throw new ServiceError('not_found', `skill ${idOrSlug} not found`);
    }
    return skill;
  }

  /** slug and scope are immutable; new content of a non-draft sends it back to draft */
  async update(org: OrgId, actor: SkillActor, idOrSlug: string, patch: SkillPatch): Promise<SkillDoc> {
    const skill = await this.get(org, actor, idOrSlug);
    rejectImmutable(skill, patch, ['slug', 'scope']);
    const { slug: _slug, scope: _scope, ...fields } = patch;
    const contentChanged = fields.content !== undefined && fields.content !== skill.content;
    // a store patch's `undefined` deletes the field: drop what the caller left out
    return this.move(org, skill, {
      ...stripUndefined(fields),
      ...(contentChanged && skill.status !== 'draft' ? { status: 'draft', submitted_by: null } : {}),
    });
  }

  async delete(org: OrgId, actor: SkillActor, idOrSlug: string): Promise<void> {
    const skill = await this.get(org, actor, idOrSlug);
    await this.collections.skills.delete(org, skill.id);
  }

  async submit(org: OrgId, actor: SkillActor, idOrSlug: string): Promise<SkillDoc> {
    const skill = await this.get(org, actor, idOrSlug);
    return this.move(org, skill, { status: checkTransition(skill, 'submit'), submitted_by: actor.userId });
  }

  async review(org: OrgId, actor: SkillActor, idOrSlug: string, action: 'approve' | 'reject', note: string | null): Promise<SkillDoc> {
    const skill = await this.get(org, actor, idOrSlug);
    const status = checkTransition(skill, action);
    checkReviewer(skill, actor);
    return this.move(org, skill, { status, reviewed_by: actor.userId, reviewed_at: nowIso(), review_note: note });
  }

  private async move(org: OrgId, skill: SkillDoc, patch: Patch<Omit<SkillDoc, keyof StoredFields>>): Promise<SkillDoc> {
    const updated = await this.collections.skills.update(org, skill.id, patch);
    if (!updated) throw new ServiceError('not_found', `skill ${skill.id} not found`);
    return updated;
  }
}

/**
 * Approvals from the thread: the approval message (the exact tool and its
 * arguments, with Approve / Deny buttons in Block Kit) and who may answer it
 * (the Slack user's email maps to a member of the organization with
 * `chat:use`, the permission the REST approval endpoint needs).
 */
import type { WebClient } from '@slack/web-api';
import { resolveRole } from '../../runtime/auth/roles.js';
import type { Collections } from '../collections.js';
import type { OrgId } from '../../runtime/store/types.js';

export const APPROVE_ACTION = 'approval_approve';
export const DENY_ACTION = 'approval_deny';

/** longest argument dump shown in the message (Slack's section text limit is 3000) */
const MAX_ARGS_CHARS = 2500;

export function approvalBlocks(approvalId: string, tool: string, args: unknown): { text: string; blocks: unknown[] } {
  let dump = JSON.stringify(args, null, 2);
  if (dump.length > MAX_ARGS_CHARS) dump = `${dump.slice(0, MAX_ARGS_CHARS)}\n... (truncated)`;
  const text = `Approval needed: ${tool}`;
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*Approval needed* to run \`${tool}\` with:\n\`\`\`${dump}\`\`\`` } },
      {
        type: 'actions',
        block_id: 'approval',
        elements: [
          { type: 'button', action_id: APPROVE_ACTION, style: 'primary', text: { type: 'plain_text', text: 'Approve' }, value: approvalId },
          { type: 'button', action_id: DENY_ACTION, style: 'danger', text: { type: 'plain_text', text: 'Deny' }, value: approvalId },
        ],
      },
    ],
  };
}

/** The decided message: the buttons are replaced by who decided what. */
export function decidedBlocks(approved: boolean, slackUser: string): { text: string; blocks: unknown[] } {
  const text = `${approved ? 'Approved' : 'Denied'} by <@${slackUser}>`;
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}

/**
 * The service user a Slack user acts as, when they are a member of the
 * organization allowed to answer approvals; null otherwise (unknown email,
 * not a member, or no `chat:use`).
 */
export async function approverOf(collections: Collections, org: OrgId, client: WebClient, slackUser: string): Promise<string | null> {
  let email: string | undefined;
  try {
    const answer = await client.users.info({ user: slackUser });
    email = answer.user?.profile?.email;
  } catch {
    // an unknown Slack user (or a token without users:read.email) maps to nobody
    return null;
  }
  if (email === undefined || email === '') return null;
  const user = await collections.users.findOne({ email: email.toLowerCase() });
  if (!user) return null;
  const membership = await collections.memberships.findOne(org, { user_id: user.id });
  if (!membership) return null;
  const role = await resolveRole(collections.roles, org, membership.role);
  return role?.permissions.includes('chat:use') ? user.id : null;
}

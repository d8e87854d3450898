/** vercel validate(): the token works (GET /v2/user) and reaches the configured team (GET /v2/teams/:id). */
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import { VercelApi, vercelConfigOf } from './config.js';

const refused = (message: string, details: Record<string, unknown>): ValidationResult => ({ ok: false, message, details });

export async function validateVercel(raw: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  signal.throwIfAborted();
  const config = vercelConfigOf(raw);
  if (config.token === '') return refused('the token is missing', { reason: 'missing_fields', missing_fields: ['token'] });
  // the user check runs without the team: a token for another team still authenticates
  const personal = new VercelApi({ ...config, teamId: null }, net);
  try {
    const { user } = await personal.get<{ user: { id: string; username: string } }>('/v2/user', signal);
    if (config.teamId !== null) {
      try {
        await personal.get<{ id: string }>(`/v2/teams/${encodeURIComponent(config.teamId)}`, signal);
      } catch (error) {
        if (ToolError.is(error) && (error.code === 'forbidden' || error.code === 'not_found')) {
          return refused(`the token cannot reach team ${config.teamId}`, {
            reason: 'team_not_accessible',
            team_id: config.teamId,
            status: error.details?.['status'],
          });
        }
        throw error;
      }
    }
    return { ok: true, details: { user: user.username, team_id: config.teamId } };
  } catch (error) {
    signal.throwIfAborted();
    if (!ToolError.is(error)) throw error;
    if (error.code === 'unauthorized') return refused(error.message, { reason: 'bad_credentials', status: error.details?.['status'] });
    return refused(error.message, { reason: error.code, ...error.details });
  }
}

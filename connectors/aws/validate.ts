/** Validation of an aws source: STS GetCallerIdentity with its credentials (after assuming its role, when it names one). */
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import { awsCall, awsSession } from './client.js';
import { stsSdk } from './sdk.js';

export interface CallerIdentity {
  readonly account: string;
  readonly arn: string;
  readonly user_id: string;
}

/** who the source's credentials are, as STS says */
export async function callerIdentity(config: Readonly<Record<string, unknown>>, net: NetPort | undefined, signal: AbortSignal): Promise<CallerIdentity> {
  const session = await awsSession(config, net, signal);
  const sts = session.client(stsSdk().STSClient, session.config.regions[0] ?? 'us-east-1');
  const answer = await awsCall('STS', signal, (options) => sts.send(new (stsSdk().GetCallerIdentityCommand)({}), options));
  return { account: answer.Account ?? '', arn: answer.Arn ?? '', user_id: answer.UserId ?? '' };
}

export async function validateAws(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  try {
    const identity = await callerIdentity(config, net, signal);
    return { ok: true, details: { ...identity } };
  } catch (error) {
    if (!ToolError.is(error)) throw error;
    const reasons: Record<string, string> = {
      unauthorized: 'AWS refused the credentials: the access key id or the secret is wrong, or the key is inactive or expired',
      forbidden: 'the credentials may not assume the role (or call STS): check the role trust policy and the external id',
    };
    return { ok: false, message: reasons[error.code] ?? error.message, details: { reason: error.code, ...error.details } };
  }
}

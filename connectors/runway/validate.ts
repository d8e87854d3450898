/** Validation of a runway source: settings in range and the API key accepted (`GET /v1/organization`). */
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import { runwayCall, runwayClient } from './client.js';
import { MEDIA_KINDS, RATIOS, settingsOf } from './settings.js';

export async function validateRunway(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  const settings = settingsOf(config);
  if (settings.apiKey === '') return { ok: false, message: 'api_key is required', details: { reason: 'missing_field', field: 'api_key' } };
  if (!(RATIOS as readonly string[]).includes(settings.ratio)) {
    return {
      ok: false,
      message: `default_ratio must be one of ${RATIOS.join(', ')}`,
      details: { reason: 'unsupported_ratio', field: 'default_ratio', value: settings.ratio },
    };
  }
  const unknownKinds = settings.enabled.filter((kind) => !(MEDIA_KINDS as readonly string[]).includes(kind));
  if (unknownKinds.length > 0) {
    return {
      ok: false,
      message: `enabled_tools may hold only ${MEDIA_KINDS.join(', ')}`,
      details: { reason: 'invalid_field', field: 'enabled_tools', unknown: unknownKinds },
    };
  }
  try {
    const organization = await runwayCall(signal, (options) => runwayClient(settings, net).organization.retrieve(options));
    return {
      ok: true,
      details: {
        credit_balance: organization.creditBalance,
        ...(organization.creditBalance <= 0 ? { warning: 'the account has no credits left: generations fail with insufficient_credits' } : {}),
      },
    };
  } catch (error) {
    if (!ToolError.is(error)) throw error;
    return { ok: false, message: error.message, details: { reason: error.code, ...error.details } };
  }
}

/**
 * `expectStatus(response, 201).toMatchObject({...})`: the status check and
 * the body check of one answer in one line. A wrong status fails with the
 * body in the message (an error envelope says why at once), then the returned
 * assertion checks the body.
 */
import { expect, type Assertion } from 'vitest';
import type { ApiResponse } from './server.js';

export function expectStatus(response: Pick<ApiResponse, 'status' | 'body'>, status: number): Assertion {
  expect(response.status, `HTTP ${response.status}: ${JSON.stringify(response.body)?.slice(0, 2000)}`).toBe(status);
  return expect(response.body);
}

/** A refusal: this status with this error code in the envelope (the message is in the failure when either differs). */
export function expectError(response: Pick<ApiResponse, 'status' | 'body'>, status: number, code: string): void {
  expectStatus(response, status);
  expect(response.body?.error?.code, String(response.body?.error?.message)).toBe(code);
}

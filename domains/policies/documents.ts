/** The documents of this domain, as the metadata store keeps them (collections: domains/collections.ts). */
import type { StoredFields } from '../../runtime/store/types.js';

/** A Rego policy (`/policies`, feature `policies`): its package is `service.<name>`. */
export interface PolicyDoc extends StoredFields {
  readonly name: string;
  readonly package_path: string;
  /** exactly one of rego_code and rego_file (a path in the organization's file store, read at load) */
  readonly rego_code: string | null;
  readonly rego_file: string | null;
  readonly enabled: boolean;
  readonly created_by: string;
}

/** One policy decision on a tool call (the decision log, `GET /policies/decisions`). */
export interface PolicyDecisionDoc extends StoredFields {
  /** the org's bundle revision the decision was made with */
  readonly revision: string;
  /** `{subject, resource, action}` with secret-looking argument values masked */
  readonly input: Record<string, unknown>;
  readonly result: 'allow' | 'deny';
  readonly messages: string[];
  /** set when the evaluation failed (the call was denied: fail closed) */
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly run_id: string | null;
  readonly at: string;
}

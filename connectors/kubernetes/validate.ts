/**
 * Validation of a kubernetes source: the kubeconfig reads, the API server
 * answers `/version` with these credentials, and a SelfSubjectAccessReview
 * per permission the read tools need says which ones are missing.
 */
import type { V1ResourceAttributes } from '@kubernetes/client-node';
import { ToolError, type NetPort, type ValidationResult } from '../contract.js';
import { kubeCall, kubernetesApis, type KubernetesApis } from './client.js';

interface Permission {
  readonly label: string;
  readonly attributes: V1ResourceAttributes;
}

const permission = (verb: string, resource: string, group = '', subresource?: string): Permission => ({
  label: `${verb} ${group === '' ? '' : `${group}/`}${resource}${subresource === undefined ? '' : `/${subresource}`}`,
  attributes: { verb, resource, group, ...(subresource === undefined ? {} : { subresource }) },
});

/** what the read tools and the sync need */
const REQUIRED_PERMISSIONS: readonly Permission[] = [
  permission('list', 'namespaces'),
  permission('list', 'pods'),
  permission('get', 'pods', '', 'log'),
  permission('list', 'events'),
  permission('list', 'deployments', 'apps'),
];
/** what only the write tool needs: missing it is reported, not refused */
const WRITE_PERMISSIONS: readonly Permission[] = [permission('patch', 'deployments', 'apps')];

const refusal = (error: unknown, server: string): ValidationResult => {
  if (!ToolError.is(error)) throw error;
  const reasons: Record<string, string> = {
    unauthorized: 'the API server refused the credentials (401): the token or client certificate is invalid or expired',
    upstream_unreachable: `the API server at ${server} cannot be reached`,
    invalid_config: error.message,
  };
  return { ok: false, message: reasons[error.code] ?? error.message, details: { reason: error.code, server, ...error.details } };
};

/** Which of the permissions the credentials lack; falls back to a plain namespace list when reviews are forbidden. */
async function missingPermissions(apis: KubernetesApis, permissions: readonly Permission[], signal: AbortSignal): Promise<string[]> {
  const missing: string[] = [];
  for (const wanted of permissions) {
    try {
      const review = await kubeCall(apis, signal, () =>
        apis.authorization.createSelfSubjectAccessReview({
          body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: wanted.attributes } },
        }),
      );
      if (review.status?.allowed !== true) missing.push(wanted.label);
    } catch (error) {
      if (!ToolError.is(error) || error.code !== 'forbidden') throw error;
      // reviews themselves are not allowed: listing namespaces is the next best evidence
      await kubeCall(apis, signal, () => apis.core.listNamespace({ limit: 1 })).catch((listError: unknown) => {
        if (ToolError.is(listError) && listError.code === 'forbidden') missing.push('list namespaces');
        else throw listError;
      });
      return missing;
    }
  }
  return missing;
}

export async function validateKubernetes(config: Readonly<Record<string, unknown>>, signal: AbortSignal, net?: NetPort): Promise<ValidationResult> {
  let apis: KubernetesApis;
  try {
    apis = kubernetesApis(config, net);
  } catch (error) {
    return refusal(error, 'unknown');
  }
  try {
    const version = await kubeCall(apis, signal, () => apis.version.getCode());
    const missing = await missingPermissions(apis, REQUIRED_PERMISSIONS, signal);
    if (missing.length > 0) {
      return {
        ok: false,
        message: `the credentials lack permissions the connector needs: ${missing.join(', ')}`,
        details: { reason: 'missing_permissions', missing_permissions: missing, server: apis.server },
      };
    }
    const missingWrite = await missingPermissions(apis, WRITE_PERMISSIONS, signal);
    return {
      ok: true,
      details: { server_version: version.gitVersion, server: apis.server, ...(missingWrite.length > 0 ? { missing_write_permissions: missingWrite } : {}) },
    };
  } catch (error) {
    return refusal(error, apis.server);
  }
}

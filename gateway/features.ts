/**
 * Which path prefixes belong to each feature-gated subsystem (the spec's
 * "Feature-gated" groups). A request under a prefix whose feature is off
 * answers 404 `feature_disabled` naming the flag, whether or not a route of
 * that subsystem exists in this build, so a client can tell "switched off"
 * from "no such route".
 */
import type { FeatureFlags } from '../runtime/config.js';
import { ServiceError } from '../runtime/errors.js';

export type FeatureName = keyof FeatureFlags;

const FEATURE_PREFIXES: Readonly<Record<FeatureName, readonly string[]>> = {
  rag: ['/rag'],
  workers: ['/workers/status'],
  orchestrator: ['/orchestrator'],
  voice: ['/voice'],
  policies: ['/policies'],
};

/** the feature a path (below `/api/v1`) belongs to, if any */
export function featureOfPath(path: string): FeatureName | null {
  for (const [feature, prefixes] of Object.entries(FEATURE_PREFIXES) as [FeatureName, readonly string[]][]) {
    if (prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`))) return feature;
  }
  return null;
}

export function featureDisabled(feature: FeatureName): ServiceError {
  return new ServiceError('feature_disabled', `feature "${feature}" is disabled on this server`, {
    feature,
    enable_with: `SERVICE_FEATURES_${feature.toUpperCase()}=true`,
  });
}

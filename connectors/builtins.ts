/**
 * The built-in connector plugins, in load order. Each built-in gets what it
 * needs from the service here (third-party plugins only ever get ToolContext).
 */
import type { Collections } from '../runtime/collections.js';
import type { ConnectorPlugin, ConnectorPluginFactory } from './contract.js';
import { createMemoryPlugin } from './memory/index.js';

export interface BuiltinDependencies {
  readonly collections: Collections;
}

export function builtinPlugins(deps: BuiltinDependencies): (ConnectorPlugin | ConnectorPluginFactory)[] {
  return [createMemoryPlugin(deps.collections)];
}

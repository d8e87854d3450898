/**
 * The loaded-plugin registry as the platform uses it (catalog, agent runtime,
 * sources): plugins checked at load with their schemas compiled. The loader
 * (connectors/loader.ts) builds it; nothing here loads anything.
 */
import type { ConnectorPlugin, ConnectorTool, NetPort, PortName, PortOffers } from '../../connectors/contract.js';
import type { CompiledSchema } from './json-schema.js';

/** A tool checked at load, with its input validator compiled. */
export interface LoadedTool {
  /** `<kind>.<tool>`, the name the model sees */
  readonly name: string;
  /** the connector kind */
  readonly connector: string;
  readonly tool: ConnectorTool;
  readonly validateArgs: CompiledSchema;
}

/** A plugin checked at load, with its config and input validators compiled. */
export interface LoadedPlugin {
  readonly kind: string;
  readonly plugin: ConnectorPlugin;
  /** where it came from: `built-in`, the plugins.json path or the npm package name */
  readonly origin: string;
  readonly sourceless: boolean;
  readonly runOnly: boolean;
  /** the ports it declared (`requires`); the host offers every one of them, or the plugin was refused */
  readonly requires: readonly PortName[];
  readonly validateConfig: CompiledSchema;
  readonly tools: readonly LoadedTool[];
}

/** A plugin (or the plugins file) that was refused at load and skipped. */
export interface PluginProblem {
  /** the plugin's kind when it has a usable one, else its origin */
  readonly plugin: string;
  readonly origin: string;
  readonly problems: readonly string[];
}

/** Every plugin loaded at start, by kind. */
export interface PluginRegistry {
  readonly plugins: readonly LoadedPlugin[];
  plugin(kind: string): LoadedPlugin | undefined;
  /** plugins refused at load (skipped; the service runs without them); empty when all loaded */
  readonly problems: readonly PluginProblem[];
  /** the egress guard every call of these plugins goes through (tool contexts, validate, listTools, sync); absent: plain fetch */
  readonly net?: NetPort;
  /** the ports the host offers (tool contexts get the ones their plugin requires, bound to the call's organization) */
  readonly ports?: PortOffers;
}

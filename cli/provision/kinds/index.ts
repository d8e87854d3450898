/** Every provisioning kind and data source, by name. */
import type { DataSourceKind, ResourceKind } from '../schema.js';
import { agentKind } from './agent.js';
import { agentTypesData, permissionsData } from './catalogs.js';
import { memoryKind } from './memory.js';
import { realmKind } from './realm.js';
import { roleKind } from './role.js';
import { settingsKind } from './settings.js';

export const RESOURCE_KINDS: ReadonlyMap<string, ResourceKind> = new Map(
  [realmKind, agentKind, memoryKind, settingsKind, roleKind].map((kind) => [kind.name, kind]),
);
export const DATA_SOURCES: ReadonlyMap<string, DataSourceKind> = new Map([agentTypesData, permissionsData].map((kind) => [kind.name, kind]));

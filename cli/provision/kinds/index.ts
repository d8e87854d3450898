/** Every provisioning kind and data source, by name. */
import type { DataSourceKind, ResourceKind } from '../schema.js';
import { agentKind } from './agent.js';
import { agentTypesData, permissionsData } from './catalogs.js';
import { memoryKind } from './memory.js';
import { realmKind } from './realm.js';
import { roleKind } from './role.js';
import { settingsKind } from './settings.js';
import { sourceKind } from './source.js';
import { webhookKind } from './webhook.js';
import { skillKind } from './skill.js';
import { apiKeyKind } from './api-key.js';
import { taskKind } from './task.js';
import { policyKind } from './policy.js';
import { policySourceKind } from './policy-source.js';
import { channelKind } from './channel.js';
import { gatewayKind } from './gateway.js';

export const RESOURCE_KINDS: ReadonlyMap<string, ResourceKind> = new Map(
  [
    realmKind,
    agentKind,
    memoryKind,
    settingsKind,
    roleKind,
    sourceKind,
    webhookKind,
    skillKind,
    apiKeyKind,
    taskKind,
    policyKind,
    policySourceKind,
    channelKind,
    gatewayKind,
  ].map((kind) => [kind.name, kind]),
);
export const DATA_SOURCES: ReadonlyMap<string, DataSourceKind> = new Map([agentTypesData, permissionsData].map((kind) => [kind.name, kind]));

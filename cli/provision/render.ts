/** Plans as people read them (Terraform's symbols) and as JSON. */
import type { Drift, Plan, PlannedChange } from './plan.js';
import { UNKNOWN } from './expressions.js';
import { RESOURCE_KINDS } from './kinds/index.js';
import { canonical, shown } from './values.js';

const SYMBOL = { create: '+', update: '~', replace: '-/+', delete: '-', noop: ' ' } as const;
const TITLE = { create: 'create', update: 'update in place', replace: 'replace', delete: 'delete', noop: 'no changes' } as const;

function changeLines(change: PlannedChange): string[] {
  const reason = change.action !== 'replace' ? '' : change.forcedBy.length > 0 ? ` (forced by ${change.forcedBy.join(', ')})` : ' (asked for with --replace)';
  const lines = [`${SYMBOL[change.action].padStart(3)} ${change.address}: ${TITLE[change.action]}${reason}`];
  for (const item of change.changes) {
    const attribute = change.kind.attributes[item.name];
    const forces = change.action === 'replace' && change.forcedBy.includes(item.name) ? '  # forces replacement' : '';
    lines.push(
      item.before === undefined
        ? `      ${item.name} = ${shown(attribute, item.after)}`
        : `      ${item.name}: ${shown(attribute, item.before)} -> ${shown(attribute, item.after)}${forces}`,
    );
  }
  return lines;
}

/** drift of a sensitive attribute (a source config) is named, never shown */
function driftLines(drift: readonly Drift[], refreshed: Plan['refreshed']): string[] {
  if (drift.length === 0) return [];
  const lines = ['Changed outside this configuration since the last apply:'];
  for (const item of drift) {
    const kind = RESOURCE_KINDS.get(refreshed[item.address]?.kind ?? '');
    if (item.changes === null) lines.push(`  ${item.address}: deleted`);
    else
      for (const change of item.changes) {
        const attribute = kind?.attributes[change.name];
        lines.push(`  ${item.address}: ${change.name} ${shown(attribute, change.before)} -> ${shown(attribute, change.after)}`);
      }
  }
  return [...lines, ''];
}

function counts(plan: Plan): Record<'create' | 'update' | 'replace' | 'delete', number> {
  const count = (action: PlannedChange['action']) => plan.changes.filter((change) => change.action === action).length;
  return { create: count('create'), update: count('update'), replace: count('replace'), delete: count('delete') };
}

export function renderPlan(plan: Plan): string {
  const changed = plan.changes.filter((change) => change.action !== 'noop');
  const total = counts(plan);
  const lines = [...driftLines(plan.drift, plan.refreshed)];
  if (changed.length === 0) return [...lines, 'No changes: the live objects match the configuration.'].join('\n');
  for (const change of changed) lines.push(...changeLines(change));
  lines.push('', `Plan: ${total.create} to create, ${total.update} to update, ${total.replace} to replace, ${total.delete} to delete.`);
  return lines.join('\n');
}

export function planJson(plan: Plan): unknown {
  return {
    changes: plan.changes.map((change) => ({
      address: change.address,
      kind: change.kind.name,
      action: change.action,
      forced_by: change.forcedBy,
      attributes: change.changes.map((item) => {
        const sensitive = change.kind.attributes[item.name]?.sensitive === true;
        return { name: item.name, before: sensitive ? '(sensitive)' : plain(item.before), after: sensitive ? '(sensitive)' : plain(item.after) };
      }),
    })),
    drift: plan.drift.map((item) => ({ address: item.address, deleted: item.changes === null, attributes: item.changes?.map((change) => change.name) ?? [] })),
    summary: counts(plan),
  };
}

/** a planned value for JSON: unknown ones (also inside lists and objects, `[service_source.gh.id]`) as the string Terraform shows */
const plain = (value: unknown): unknown => {
  if (value === UNKNOWN) return canonical(value);
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, plain(inner)]));
  return value;
};

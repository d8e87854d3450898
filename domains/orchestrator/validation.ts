/**
 * The rules of a workflow's graph, checked when it is saved: unique step ids,
 * `needs` naming existing steps (not the step itself), no cycle (the 400 names
 * one), a `when` reading a step the step needs, templates within the safe
 * subset, bounded sizes. Agents are checked by the service (a store read).
 */
import { RE2JS } from 're2js';
import { ServiceError } from '../../runtime/errors.js';
import { TemplateError, validateInputTemplate } from '../tasks/template.js';
import { MAX_PATTERN_LENGTH } from './conditions.js';
import type { StepDef } from './documents.js';

export const MAX_STEPS = 100;

const invalid = (message: string, details: Record<string, unknown>): ServiceError => new ServiceError('validation_error', message, details);

function checkTemplates(step: StepDef): void {
  const templates: Record<string, unknown> = {};
  if (step.kind === 'agent') templates[`steps.${step.id}.instruction`] = step.instruction;
  if (step.kind === 'gateway') templates[`steps.${step.id}.input`] = step.input;
  try {
    validateInputTemplate(templates);
  } catch (error) {
    if (error instanceof TemplateError) {
      throw invalid(error.message.replace(/^input_template\./, ''), { step: step.id, field: error.key });
    }
    throw error;
  }
}

function checkCondition(step: StepDef): void {
  const { when } = step;
  if (!when) return;
  if (!step.needs.includes(when.step)) {
    throw invalid(`steps.${step.id}.when.step "${when.step}" must be one of the step's needs`, { step: step.id, when_step: when.step });
  }
  const tests = [when.equals !== undefined, when.contains !== undefined, when.matches !== undefined].filter(Boolean).length;
  if (tests !== 1) throw invalid(`steps.${step.id}.when takes exactly one of equals, contains, matches`, { step: step.id });
  if (when.matches !== undefined) {
    if (when.matches.length > MAX_PATTERN_LENGTH) throw invalid(`steps.${step.id}.when.matches is at most ${MAX_PATTERN_LENGTH} characters`, { step: step.id });
    try {
      RE2JS.compile(when.matches);
    } catch (error) {
      throw invalid(`steps.${step.id}.when.matches is not a regular expression: ${(error as Error).message}`, { step: step.id });
    }
  }
}

/** The first cycle found (its step ids, the first repeated at the end), or null. */
function findCycle(steps: readonly StepDef[]): string[] | null {
  const byId = new Map(steps.map((step) => [step.id, step]));
  const state = new Map<string, 'visiting' | 'done'>();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    const mark = state.get(id);
    if (mark === 'done') return null;
    if (mark === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    path.push(id);
    for (const need of byId.get(id)?.needs ?? []) {
      const cycle = visit(need);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, 'done');
    return null;
  };
  for (const step of steps) {
    const cycle = visit(step.id);
    if (cycle) return cycle;
  }
  return null;
}

/** Throws 400 validation_error naming the first broken rule. */
export function validateSteps(steps: readonly StepDef[]): void {
  if (steps.length === 0) throw invalid('a workflow has at least one step', {});
  if (steps.length > MAX_STEPS) throw invalid(`a workflow has at most ${MAX_STEPS} steps`, { steps: steps.length });
  const ids = new Set<string>();
  for (const step of steps) {
    if (ids.has(step.id)) throw invalid(`step id "${step.id}" is used twice`, { step: step.id });
    ids.add(step.id);
  }
  for (const step of steps) {
    if (new Set(step.needs).size !== step.needs.length) throw invalid(`steps.${step.id}.needs names a step twice`, { step: step.id });
    for (const need of step.needs) {
      if (need === step.id) throw invalid(`step "${step.id}" needs itself`, { step: step.id, cycle: [step.id, step.id] });
      if (!ids.has(need)) throw invalid(`step "${step.id}" needs unknown step "${need}"`, { step: step.id, unknown_need: need });
    }
    checkCondition(step);
    checkTemplates(step);
  }
  const cycle = findCycle(steps);
  if (cycle) throw invalid(`the steps form a cycle: ${cycle.join(' -> ')}`, { cycle });
}

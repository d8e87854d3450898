/**
 * What a model turn costs, for the daily cost cap of tasks and the run
 * transcript. Public list prices in USD per million tokens; `LLM_PRICES`
 * (config) adds models or overrides these.
 *
 * A model is looked up (case-insensitively) exactly, then by its longest listed prefix followed by
 * `-`, `:` or `@` (so dated snapshots such as `gpt-4o-2024-08-06` or
 * `claude-sonnet-4-5-20250929` find their family), after dropping a router's
 * `vendor/` prefix. An unknown model costs FALLBACK_PRICE: deliberately the
 * most expensive common tier, never zero, so a cost cap still bites early
 * rather than never.
 */
import type { Usage } from './types.js';

export interface ModelPrice {
  readonly input_per_mtok: number;
  readonly output_per_mtok: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

const price = (input: number, output: number): ModelPrice => ({ input_per_mtok: input, output_per_mtok: output });

const DEFAULT_PRICES: PriceTable = Object.freeze({
  // OpenAI
  'gpt-5': price(1.25, 10),
  'gpt-5.1': price(1.25, 10),
  'gpt-5-mini': price(0.25, 2),
  'gpt-5-nano': price(0.05, 0.4),
  'gpt-4.1': price(2, 8),
  'gpt-4.1-mini': price(0.4, 1.6),
  'gpt-4.1-nano': price(0.1, 0.4),
  'gpt-4o': price(2.5, 10),
  'gpt-4o-mini': price(0.15, 0.6),
  'gpt-4-turbo': price(10, 30),
  'gpt-4': price(30, 60),
  'gpt-3.5-turbo': price(0.5, 1.5),
  o1: price(15, 60),
  'o1-mini': price(1.1, 4.4),
  o3: price(2, 8),
  'o3-pro': price(20, 80),
  'o3-mini': price(1.1, 4.4),
  'o4-mini': price(1.1, 4.4),
  // Anthropic
  'claude-opus-4-5': price(5, 25),
  'claude-opus-4-1': price(15, 75),
  'claude-opus-4': price(15, 75),
  'claude-sonnet-4-5': price(3, 15),
  'claude-sonnet-4': price(3, 15),
  'claude-haiku-4-5': price(1, 5),
  'claude-3-7-sonnet': price(3, 15),
  'claude-3-5-sonnet': price(3, 15),
  'claude-3-5-haiku': price(0.8, 4),
  'claude-3-opus': price(15, 75),
  'claude-3-haiku': price(0.25, 1.25),
});

/** The price of a model nobody listed: the top common tier (Claude Opus 4 / 4.1). */
export const FALLBACK_PRICE: ModelPrice = Object.freeze(price(15, 75));

function lookup(table: PriceTable, model: string): ModelPrice | null {
  let best: { length: number; price: ModelPrice } | null = null;
  for (const [rawKey, found] of Object.entries(table)) {
    const key = rawKey.toLowerCase();
    if (key === model) return found;
    const prefixed = model.length > key.length && model.startsWith(key) && '-:@'.includes(model.charAt(key.length));
    if (prefixed && (best === null || key.length > best.length)) best = { length: key.length, price: found };
  }
  return best?.price ?? null;
}

/** `overrides` (config `LLM_PRICES`) win over the built-in table. */
export function priceOf(model: string, overrides: PriceTable = {}): ModelPrice {
  const name = model.trim().toLowerCase();
  const bare = name.slice(name.lastIndexOf('/') + 1);
  for (const candidate of name === bare ? [name] : [name, bare]) {
    const found = lookup(overrides, candidate) ?? lookup(DEFAULT_PRICES, candidate);
    if (found !== null) return found;
  }
  return FALLBACK_PRICE;
}

/** USD for one turn's usage. */
export function costUsd(model: string, usage: Usage, overrides: PriceTable = {}): number {
  const { input_per_mtok, output_per_mtok } = priceOf(model, overrides);
  return (usage.input_tokens * input_per_mtok + usage.output_tokens * output_per_mtok) / 1_000_000;
}

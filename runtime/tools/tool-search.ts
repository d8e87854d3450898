/**
 * Ranked search over a run's catalog entries: a small BM25F scorer over four
 * weighted fields (tool name, connector kind, source name, description).
 * Deterministic: ties are broken by name, then source id.
 */

export interface SearchDocument {
  /** `<kind>.<tool>` */
  readonly name: string;
  readonly sourceId: string | null;
  readonly fields: Readonly<Record<SearchField, readonly string[]>>;
}

type SearchField = 'tool' | 'connector' | 'source' | 'description';

const FIELD_WEIGHTS: Readonly<Record<SearchField, number>> = { tool: 3, connector: 2, source: 2, description: 1 };
const FIELDS = Object.keys(FIELD_WEIGHTS) as SearchField[];
const K1 = 1.2;
const B = 0.75;
/** a query term that is only a prefix of a document term (`iss` of `issue`) counts this much */
const PREFIX_CREDIT = 0.5;
const MIN_PREFIX = 3;

const STOPWORDS = new Set([
  'a',
  'an',
  'and',
  'any',
  'are',
  'by',
  'can',
  'do',
  'for',
  'from',
  'i',
  'in',
  'is',
  'it',
  'me',
  'my',
  'of',
  'on',
  'or',
  'some',
  'that',
  'the',
  'this',
  'to',
  'tool',
  'tools',
  'use',
  'with',
]);

/** `issues` -> `issue`, `searching` -> `search`: enough folding for short tool texts */
function stem(token: string): string {
  if (token.length > 5 && token.endsWith('ing')) return token.slice(0, -3);
  if (token.length > 4 && token.endsWith('ies')) return `${token.slice(0, -3)}y`;
  if (token.length > 4 && token.endsWith('es') && /(ches|shes|sses|xes)$/.test(token)) return token.slice(0, -2);
  if (token.length > 3 && token.endsWith('s') && !token.endsWith('ss')) return token.slice(0, -1);
  return token;
}

/** lowercase words and numbers; snake_case and dotted names split into their parts */
export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((token) => token.length > 0 && !STOPWORDS.has(token))
    .map(stem);
}

/** how much `docToken` counts for `term`: 1 exact, PREFIX_CREDIT for a prefix, else 0 */
const matchWeight = (term: string, docToken: string): number =>
  docToken === term ? 1 : term.length >= MIN_PREFIX && docToken.startsWith(term) ? PREFIX_CREDIT : 0;

const termFrequency = (term: string, tokens: readonly string[]): number => {
  let tf = 0;
  for (const token of tokens) tf += matchWeight(term, token);
  return tf;
};

export interface ScoredDocument<T extends SearchDocument> {
  readonly doc: T;
  readonly score: number;
}

const byNameThenSource = (a: SearchDocument, b: SearchDocument): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : (a.sourceId ?? '') < (b.sourceId ?? '') ? -1 : (a.sourceId ?? '') > (b.sourceId ?? '') ? 1 : 0;

/**
 * Documents matching at least one query term, best first. A query with no
 * usable terms lists every document by name, so a model can browse.
 */
export function rankDocuments<T extends SearchDocument>(docs: readonly T[], query: string, limit: number): ScoredDocument<T>[] {
  const terms = [...new Set(tokenize(query))];
  if (terms.length === 0)
    return [...docs]
      .sort(byNameThenSource)
      .slice(0, limit)
      .map((doc) => ({ doc, score: 0 }));

  const averageLength = {} as Record<SearchField, number>;
  for (const field of FIELDS) {
    const total = docs.reduce((sum, doc) => sum + doc.fields[field].length, 0);
    averageLength[field] = docs.length === 0 ? 1 : Math.max(total / docs.length, 1);
  }
  const n = docs.length;
  const idf = new Map<string, number>();
  for (const term of terms) {
    const containing = docs.filter((doc) => FIELDS.some((field) => termFrequency(term, doc.fields[field]) > 0)).length;
    idf.set(term, Math.log(1 + (n - containing + 0.5) / (containing + 0.5)));
  }

  const scored: ScoredDocument<T>[] = [];
  for (const doc of docs) {
    let score = 0;
    for (const term of terms) {
      let weighted = 0;
      for (const field of FIELDS) {
        const tf = termFrequency(term, doc.fields[field]);
        if (tf === 0) continue;
        const norm = 1 - B + (B * doc.fields[field].length) / averageLength[field];
        weighted += (FIELD_WEIGHTS[field] * tf) / norm;
      }
      if (weighted > 0) score += (idf.get(term) ?? 0) * ((weighted * (K1 + 1)) / (weighted + K1));
    }
    if (score > 0) scored.push({ doc, score });
  }
  return scored.sort((a, b) => b.score - a.score || byNameThenSource(a.doc, b.doc)).slice(0, limit);
}

/** Levenshtein distance, for "did you mean" suggestions on unknown tool names. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

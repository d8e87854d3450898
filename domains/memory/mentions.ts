/**
 * Which entities a memory's text names: an entity is named when its `_key` or
 * its `name` occurs in the text as whole words (case-insensitive; the
 * characters before and after are not letters, digits or `_`). Names shorter
 * than MIN_NAME_LENGTH are ignored (a key such as `a` would match everywhere).
 *
 * Names are indexed by their first word, so a text is scanned once, word by
 * word, however many entities the realm holds.
 */

export interface EntityRef {
  readonly label: string;
  readonly key: string;
}

const MIN_NAME_LENGTH = 3;
/** the most entities one memory links to */
export const MAX_MENTIONS_PER_MEMORY = 100;

const WORD = /[\p{L}\p{N}_]+/gu;
const WORD_CHAR = /[\p{L}\p{N}_]/u;

interface Candidate {
  readonly text: string;
  readonly entity: EntityRef;
}

export class MentionIndex {
  private readonly byFirstWord = new Map<string, Candidate[]>();

  /** adds an entity under each of its names (its key, its `name` when a string) */
  add(entity: EntityRef, name: unknown): void {
    this.addName(entity.key, entity);
    if (typeof name === 'string' && name !== entity.key) this.addName(name, entity);
  }

  private addName(raw: string, entity: EntityRef): void {
    const text = raw.trim().toLowerCase();
    if (text.length < MIN_NAME_LENGTH || !WORD_CHAR.test(text[0]!)) return;
    const first = new RegExp(WORD.source, 'u').exec(text)?.[0];
    if (!first) return;
    let list = this.byFirstWord.get(first);
    if (!list) this.byFirstWord.set(first, (list = []));
    list.push({ text, entity });
  }

  /** the entities the text names, each once, in order of first mention */
  find(raw: string): EntityRef[] {
    const text = raw.toLowerCase();
    const found = new Map<string, EntityRef>();
    for (const match of text.matchAll(WORD)) {
      const candidates = this.byFirstWord.get(match[0]);
      if (!candidates) continue;
      const at = match.index;
      for (const candidate of candidates) {
        if (!text.startsWith(candidate.text, at)) continue;
        const after = text[at + candidate.text.length];
        if (after !== undefined && WORD_CHAR.test(after)) continue;
        const id = `${candidate.entity.label}:${candidate.entity.key}`;
        if (!found.has(id)) found.set(id, candidate.entity);
        if (found.size >= MAX_MENTIONS_PER_MEMORY) return [...found.values()];
      }
    }
    return [...found.values()];
  }
}

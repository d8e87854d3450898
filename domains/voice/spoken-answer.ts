/**
 * The user's spoken answer to an approval question, read from the final
 * transcript of their turn. This reads a person's answer (the decision is
 * theirs; the policy gate already ran), so a small explicit word list per
 * language is enough, and it errs one way only: the whole utterance, once
 * polite filler is dropped, must be made of the listed phrases of one side
 * ("yeah, go ahead", "no, don't do it"); anything else (a sentence, "yes ...
 * no", "I don't know") is `unclear`, which re-asks and never approves. The
 * lists are in the README.
 */

export type SpokenAnswer = 'yes' | 'no' | 'unclear';

interface AnswerWords {
  readonly yes: readonly string[];
  readonly no: readonly string[];
  /** dropped wherever they are ("yes please", "no thank you") */
  readonly filler: readonly string[];
}

/** per language; a session has no language of its own, so every list is tried (no phrase is yes in one and no in another) */
const ANSWER_WORDS: Readonly<Record<'en' | 'de' | 'fr' | 'es', AnswerWords>> = {
  en: {
    yes: ['yes', 'yeah', 'yep', 'yup', 'sure', 'ok', 'okay', 'approve', 'approved', 'go ahead', 'do it', 'confirm', 'confirmed'],
    no: ['no', 'nope', 'nah', 'deny', 'denied', 'stop', 'cancel', "don't", 'do not', "don't do it", 'do not do it'],
    filler: ['please', 'thanks', 'thank', 'you'],
  },
  de: {
    yes: ['ja', 'jawohl', 'genau', 'okay', 'mach das', 'freigeben'],
    no: ['nein', 'nee', 'stopp', 'abbrechen', 'nicht', 'lieber nicht'],
    filler: ['bitte', 'danke'],
  },
  fr: {
    yes: ['oui', 'ouais', "d'accord", 'vas-y', 'allez-y', 'confirme', 'confirmé'],
    no: ['non', 'annule', 'arrête', 'surtout pas'],
    filler: ["s'il", 'te', 'vous', 'plaît', 'plait', 'merci'],
  },
  es: {
    yes: ['sí', 'si', 'claro', 'vale', 'adelante', 'hazlo', 'confirmo'],
    no: ['no', 'cancela', 'para', 'no lo hagas'],
    filler: ['por', 'favor', 'gracias'],
  },
};

const LANGUAGES = Object.values(ANSWER_WORDS);
const YES = new Set(LANGUAGES.flatMap((words) => words.yes));
const NO = new Set(LANGUAGES.flatMap((words) => words.no));
const FILLER = new Set(LANGUAGES.flatMap((words) => words.filler));

/** lowercase words: letters, digits, apostrophes and inner hyphens kept; punctuation and repeats ("yes, yes") dropped */
function words(text: string): string[] {
  const out: string[] = [];
  for (const raw of text
    .normalize('NFC')
    .toLowerCase()
    .replaceAll('’', "'")
    .split(/[^\p{L}\p{N}'-]+/u)) {
    const word = raw.replace(/^['-]+|['-]+$/g, '');
    if (word === '' || FILLER.has(word) || out.at(-1) === word) continue;
    out.push(word);
  }
  return out;
}

/** whether the words split, in order, into phrases of the set (each phrase at most 4 words) */
function madeOf(list: readonly string[], phrases: ReadonlySet<string>): boolean {
  if (list.length === 0) return false;
  const reachable = [true, ...list.map(() => false)];
  for (let end = 1; end <= list.length; end++) {
    for (let start = Math.max(0, end - 4); start < end && !reachable[end]; start++) {
      reachable[end] = reachable[start] === true && phrases.has(list.slice(start, end).join(' '));
    }
  }
  return reachable[list.length] === true;
}

export function readSpokenAnswer(transcript: string): SpokenAnswer {
  const list = words(transcript);
  const yes = madeOf(list, YES);
  const no = madeOf(list, NO);
  if (yes === no) return 'unclear';
  return yes ? 'yes' : 'no';
}

/**
 * Recurring questions: user chat messages normalised to a set of content
 * words and clustered greedily by Jaccard similarity of those sets, so
 * "Which PRs are stale?" and "which pull requests are stale" land together
 * while unrelated questions do not. Cheap, deterministic, no model call.
 */

/** two questions whose word sets overlap at least this much are the same question */
const SIMILARITY_THRESHOLD = 0.6;

const STOPWORDS = new Set(
  (
    'a an and are as at be been by can could did do does for from had has have how i in is it its me my of on or our please ' +
    'show tell that the their them there these this those to us was we were what when where which who why will with would you your ' +
    'any all some get give list let know about today now currently current'
  ).split(' '),
);

/** synonyms folded to one word, for the systems this service talks to */
const SYNONYMS: Readonly<Record<string, string>> = {
  pr: 'pull',
  prs: 'pull',
  pull: 'pull',
  pulls: 'pull',
  request: 'pull',
  requests: 'pull',
  mr: 'pull',
  mrs: 'pull',
  build: 'build',
  builds: 'build',
  pipeline: 'build',
  pipelines: 'build',
  ci: 'build',
  deploy: 'deploy',
  deploys: 'deploy',
  deployment: 'deploy',
  deployments: 'deploy',
  deployed: 'deploy',
  release: 'deploy',
  releases: 'deploy',
  failing: 'fail',
  failed: 'fail',
  fails: 'fail',
  failure: 'fail',
  failures: 'fail',
  broken: 'fail',
  red: 'fail',
};

/** The content words of a question, folded: lowercase, no accents or punctuation, no stopwords, simple plural stripping. */
function questionTerms(text: string): Set<string> {
  const words = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0 && !STOPWORDS.has(word));
  const terms = new Set<string>();
  for (const word of words) {
    const folded = SYNONYMS[word] ?? (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word);
    terms.add(folded);
  }
  return terms;
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let shared = 0;
  for (const term of a) if (b.has(term)) shared += 1;
  return shared / (a.size + b.size - shared);
}

export interface Question {
  readonly text: string;
  readonly conversation_id: string;
  readonly at: string;
}

export interface QuestionCluster {
  /** the first question's terms: later questions are compared with it */
  readonly terms: ReadonlySet<string>;
  readonly questions: Question[];
}

/** Clusters questions (oldest first); each question joins the first cluster it is similar enough to. */
export function clusterQuestions(questions: readonly Question[]): QuestionCluster[] {
  const clusters: QuestionCluster[] = [];
  for (const question of [...questions].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))) {
    const terms = questionTerms(question.text);
    // one or no content word ("hi", "thanks") is not a question worth a task
    if (terms.size < 2) continue;
    const home = clusters.find((cluster) => jaccard(cluster.terms, terms) >= SIMILARITY_THRESHOLD);
    if (home) home.questions.push(question);
    else clusters.push({ terms, questions: [question] });
  }
  return clusters;
}

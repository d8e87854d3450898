/**
 * What a user's Cypher query does, read from the physical plan Kùzu prints
 * for `EXPLAIN <query>` (the engine's own parse, bind and plan), never from
 * the query text: every operator of the plan must be on an allow-list, and
 * every table function it calls too.
 *
 * The plan is text: each operator is a box whose first line is `NAME[id]`,
 * and a table function call's box holds a `Function: NAME` line. Text the
 * query carries (literals, names) can show up in the plan too, but it can
 * only add operator or function names, never hide the engine's: so requiring
 * every name found to be allowed is sound (a query that prints a refused
 * name in a literal is refused, which costs nothing).
 */
import { ServiceError } from '../../errors.js';

export type CypherKind = 'read' | 'write';

/** operators that only read the realm's own graph (names from PhysicalOperatorUtils::operatorToString) */
const READ_OPERATORS = new Set([
  'RESULT_COLLECTOR',
  'PROJECTION',
  'FILTER',
  'FLATTEN',
  'SCAN_NODE_TABLE',
  'SCAN_REL_TABLE',
  'PRIMARY_KEY_SCAN_NODE_TABLE',
  'HASH_JOIN_BUILD',
  'HASH_JOIN_PROBE',
  'INTERSECT_BUILD',
  'INTERSECT',
  'CROSS_PRODUCT',
  'SEMI_MASKER',
  'PATH_PROPERTY_PROBE',
  'RECURSIVE_EXTEND',
  'AGGREGATE',
  'AGGREGATE_FINALIZE',
  'AGGREGATE_SCAN',
  'ORDER_BY',
  'ORDER_BY_MERGE',
  'ORDER_BY_SCAN',
  'TOP_K',
  'TOP_K_SCAN',
  'LIMIT',
  'SKIP',
  'UNWIND',
  'UNION_ALL_SCAN',
  'MULTIPLICITY_REDUCER',
  'EMPTY_RESULT',
  'DUMMY_SINK',
  'TABLE_FUNCTION_CALL',
]);
/** node and relationship data changes (CREATE, SET, REMOVE, DELETE, MERGE): graph:write only */
const WRITE_OPERATORS = new Set(['INSERT', 'SET_PROPERTY', 'DELETE', 'MERGE']);
/**
 * Table functions a plan may call: READ_FTABLE reads the query's own
 * intermediate results (UNWIND, paths, writes); the rest read the realm's
 * catalog or its full-text index. File readers (LOAD FROM), settings and
 * everything else are refused.
 */
const READ_FUNCTIONS = new Set(['READ_FTABLE', 'QUERY_FTS_INDEX', 'SHOW_TABLES', 'TABLE_INFO', 'SHOW_CONNECTION', 'SHOW_INDEXES']);

/**
 * an operator's header line in a box: `│   NAME[3]   │` (boxes of one plan row
 * share a line); operator names are one word, while a detail line that names
 * another operator has a label before it (`Operators: SCAN_NODE_TABLE[2]`)
 */
const OPERATOR_HEADER = /│ *([^│\s]+)\[\d+\] *│/g;
/** a table function's name inside its box (TableFunctionCallPrintInfo: `Function: NAME, Expressions: ...`) */
const FUNCTION_LINE = /Function:([^,│]*)/g;

export interface PlanSummary {
  readonly operators: string[];
  readonly functions: string[];
}

/** the operator and table function names of an `EXPLAIN` physical plan */
export function readPlan(plan: string): PlanSummary {
  const operators = [...plan.matchAll(OPERATOR_HEADER)].map((match) => match[1]!.trim());
  const functions = [...plan.matchAll(FUNCTION_LINE)].map((match) => match[1]!.trim().toUpperCase());
  return { operators, functions };
}

/**
 * `read` or `write` for a plan whose every operator and function is
 * allowed; throws 400 `validation_error` naming the first that is not.
 */
export function judgePlan(plan: PlanSummary): CypherKind {
  if (plan.operators.length === 0) {
    throw new ServiceError('validation_error', 'the Cypher query has no plan the service can check, so it is refused');
  }
  let kind: CypherKind = 'read';
  for (const operator of plan.operators) {
    if (WRITE_OPERATORS.has(operator)) kind = 'write';
    else if (!READ_OPERATORS.has(operator)) {
      throw new ServiceError(
        'validation_error',
        `the Cypher query is refused: it plans ${operator}, which is not a read or a node/relationship write of the realm's graph (no files, other databases, extensions, settings, transactions or schema changes)`,
        {
          operator,
        },
      );
    }
  }
  for (const name of plan.functions) {
    if (!READ_FUNCTIONS.has(name)) {
      throw new ServiceError(
        'validation_error',
        `the Cypher query is refused: it calls the table function ${name || '(unnamed)'}, which is not one the service allows`,
        {
          function: name,
          allowed_functions: [...READ_FUNCTIONS].filter((item) => item !== 'READ_FTABLE').map((item) => item.toLowerCase()),
        },
      );
    }
  }
  return kind;
}

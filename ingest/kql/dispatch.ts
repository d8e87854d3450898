/** Which translation each tabular operator gets. */
import { ServiceError } from '../../runtime/errors.js';
import { evaluate } from './evaluate.js';
import { asOperator } from './as.js';
import { mvExpand, parse } from './expand.js';
import { join, lookup, union } from './joins.js';
import { child, children, kindOf, type KNode } from './kusto.js';
import { count, distinct, extend, project, serialize, sort, summarize, take, top, where, type OperatorContext } from './operators.js';
import type { Column, Relation } from './relation.js';
import { scan } from './scan.js';
import { mvApply } from './mv-apply.js';
import { parseKv } from './parse-kv.js';
import { partition } from './partition.js';
import { search } from './search.js';
import { makeSeries } from './series.js';
import { topNested } from './top-nested.js';
import type { Translator } from './translate.js';

export function expectOne(node: KNode): never {
  throw new ServiceError('kql_error', `unsupported in KQL translation: ${kindOf(node)}`, {
    construct: kindOf(node),
    text: node.ToString().trim().slice(0, 200),
  });
}

export function operator(translator: Translator, node: KNode, input: Relation | null, output: Column[]): Relation {
  const ctx: OperatorContext = { chain: translator.chain, lets: translator.lets, tabular: (expression) => translator.tabular(expression) };
  const kind = kindOf(node);
  if (kind === 'UnionOperator') {
    const inputs = input ? [input] : [];
    for (const expression of children(node, 'Expressions')) inputs.push(translator.tabular(expression));
    return union(node, inputs, ctx, output);
  }
  if (kind === 'MaterializeExpression') return translator.tabular(child(node, 'Expression') as KNode);
  if (!input) return expectOne(node);
  switch (kind) {
    case 'FilterOperator':
      return where(node, input, ctx);
    case 'ProjectOperator':
    case 'ProjectAwayOperator':
    case 'ProjectKeepOperator':
    case 'ProjectReorderOperator':
    case 'ProjectRenameOperator':
      return project(node, input, ctx, output);
    case 'ExtendOperator':
      return extend(node, input, ctx, output);
    case 'SummarizeOperator':
      return summarize(node, input, ctx, output);
    case 'TakeOperator':
      return take(node, input, ctx);
    case 'SortOperator':
      return sort(node, input, ctx);
    case 'TopOperator':
      return top(node, input, ctx);
    case 'CountOperator':
      return count(input, ctx, output);
    case 'DistinctOperator':
      return distinct(node, input, ctx, output);
    case 'SerializeOperator':
      return serialize(node, input, ctx, output);
    case 'JoinOperator':
      return join(node, input, translator.tabular(child(node, 'Expression') as KNode), ctx, output);
    case 'LookupOperator':
      return lookup(node, input, translator.tabular(child(node, 'Expression') as KNode), ctx, output);
    case 'MvExpandOperator':
      return mvExpand(node, input, ctx, output);
    case 'ParseOperator':
      return parse(node, input, ctx, output);
    case 'MakeSeriesOperator':
      return makeSeries(node, input, ctx, output);
    case 'ScanOperator':
      return scan(node, input, ctx, output);
    case 'TopNestedOperator':
      return topNested(node, input, ctx, output);
    case 'MvApplyOperator':
      return mvApply(node, input, ctx, output);
    case 'EvaluateOperator':
      return evaluate(node);
    case 'SearchOperator':
      return search(node, input, ctx, output);
    case 'ParseKvOperator':
      return parseKv(node, input, ctx, output);
    case 'AsOperator':
      return asOperator(translator, node, input);
    case 'PartitionOperator':
      return partition(translator, node, input, output);
    case 'RenderOperator':
      translator.chart = (child(node, 'ChartType') as KNode).ToString().trim();
      return input;
    default:
      return expectOne(node);
  }
}

/**
 * evaluate: no plugin is translated yet. bag_unpack and pivot make one column
 * per key or value found in the data, and the analyzer gives them no columns,
 * so a SELECT written before the data is read cannot name them: refused with
 * `kql_error` naming the plugin.
 */
import { ServiceError } from '../../runtime/errors.js';
import { child, type KNode } from './kusto.js';

export function evaluate(node: KNode): never {
  const call = child(node, 'FunctionCall');
  const plugin = call ? ((child(call, 'Name') as unknown as { SimpleName?: string }).SimpleName ?? 'unknown') : 'unknown';
  throw new ServiceError('kql_error', `evaluate ${plugin}: plugins are not supported (their output columns depend on the data)`, {
    construct: 'EvaluateOperator',
    plugin,
  });
}

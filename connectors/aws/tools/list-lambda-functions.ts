/** aws.list_lambda_functions: Lambda functions with runtime, memory, timeout and last change. */
import type { ConnectorTool } from '../../contract.js';
import { lambdaFunctionView } from '../present.js';
import { readLambdaFunctions } from '../read.js';
import { limitProperty, listAcrossRegions, regionProperty, sessionOf } from './shared.js';

export const listLambdaFunctionsTool: ConnectorTool = {
  name: 'list_lambda_functions',
  effect: 'read',
  description:
    'List Lambda functions (name, ARN, runtime, handler, memory, timeout, code size, last modified) in one region or all of them. ' +
    '`name_contains` narrows the list by name.',
  input_schema: {
    type: 'object',
    properties: {
      region: regionProperty,
      name_contains: { type: 'string', minLength: 1, maxLength: 140, description: 'only functions whose name contains this (case-insensitive)' },
      limit: limitProperty(1000, 100),
    },
    additionalProperties: false,
  },
  run: async (args, ctx) => {
    const session = await sessionOf(ctx);
    const needle = (args['name_contains'] as string | undefined)?.toLowerCase();
    // the API has no name filter: read up to the limit, then narrow
    const named = async (region: string) => {
      const read = await readLambdaFunctions(session, region, ctx.signal, args['limit'] as number);
      return { ...read, items: needle === undefined ? read.items : read.items.filter((fn) => (fn.FunctionName ?? '').toLowerCase().includes(needle)) };
    };
    return listAcrossRegions(session, args, named, lambdaFunctionView);
  },
};

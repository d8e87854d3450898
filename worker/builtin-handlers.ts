/** The job kinds every worker runs. */
import type { HandlerTable } from './handlers.js';

export const builtinHandlers: HandlerTable = {};

/**
 * The plugin SDK: the contract's types and ToolError. Inside this repository
 * it re-exports connectors/contract.ts; in your own package, replace this
 * file with a copy of connectors/contract.ts (its only imports are types of node:http). ToolError
 * is branded with Symbol.for, so the service recognises it from any copy.
 */
export * from '../contract.js';

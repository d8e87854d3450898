/** JSON Schema of a node id argument, shared by the tools */
export const NODE_ID_SCHEMA = {
  type: 'string',
  minLength: 3,
  maxLength: 600,
  description: 'the node id, Label:key, e.g. Service:payments-api',
};

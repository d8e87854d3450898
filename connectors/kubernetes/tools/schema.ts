/** Input-schema fragments shared by the list tools (the API's own `limit`/`continue` paging). */
export const pagingProperties = {
  limit: { type: 'integer', minimum: 1, maximum: 500, default: 100, description: 'page size (the API server may return fewer)' },
  continue: { type: 'string', minLength: 1, description: 'the `next_continue` token of the previous page' },
} as const;

export const namespaceProperty = {
  type: 'string',
  pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  maxLength: 63,
  description: 'the namespace; omit for all namespaces',
} as const;

export const nameProperty = { type: 'string', minLength: 1, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' } as const;

/** Errors of the Rego engine, with OPA's codes; positions are 1-based line and column. */
export type RegoErrorCode =
  | 'rego_parse_error'
  | 'rego_compile_error'
  | 'rego_type_error'
  | 'rego_unsafe_var_error'
  | 'rego_recursion_error'
  | 'eval_conflict_error'
  | 'eval_type_error'
  | 'eval_builtin_error'
  | 'eval_with_merge_error'
  | 'eval_cancel_error';

export interface Location {
  readonly line: number;
  readonly column: number;
  readonly file?: string;
}

export class RegoError extends Error {
  constructor(
    readonly code: RegoErrorCode,
    readonly detail: string,
    readonly location?: Location,
  ) {
    super(`${location ? `${location.file ?? ''}${location.file ? ':' : ''}${location.line}:${location.column}: ` : ''}${code}: ${detail}`);
  }
  toJSON(): { code: RegoErrorCode; message: string; line?: number; column?: number } {
    return { code: this.code, message: this.detail, ...(this.location ? { line: this.location.line, column: this.location.column } : {}) };
  }
}

/** a built-in failed (type or value); undefined unless strict built-in errors are on */
export class BuiltinError extends RegoError {}

export const typeErr = (fn: string, pos: number, want: string, got: string): BuiltinError =>
  new BuiltinError('eval_type_error', `${fn}: operand ${pos} must be ${want} but got ${got}`);

export const builtinErr = (fn: string, msg: string): BuiltinError => new BuiltinError('eval_builtin_error', `${fn}: ${msg}`);

/**
 * Text a person names things with (names, titles, labels, display names):
 * one refinement every route applies, so no store, log line, header or file
 * name ever receives a NUL, a control character or half a UTF-16 surrogate
 * pair (JSON's `\ud800` escape decodes to one; it has no UTF-8 form, so SQLite,
 * MongoDB and every client would each read it differently).
 */
import { z } from 'zod';

/** a high surrogate not followed by a low one, or a low one not preceded by a high one */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** C0 controls but tab and newline, DEL, and C1 controls */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** free text keeps carriage returns too (pasted Windows line ends) */
const CONTROL_MULTILINE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

/** Why `value` is refused, or null. */
function textProblem(value: string, multiline = false): string | null {
  if (value.includes('\u0000')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(value)) return 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair)';
  if ((multiline ? CONTROL_MULTILINE : CONTROL).test(value)) return 'must not contain control characters';
  return null;
}

/**
 * `schema` refusing NUL, lone surrogates and control characters other than
 * tab and newline (400 `validation_error` at the field's path). Astral
 * characters (emoji) written as proper pairs are accepted.
 */
export function safeName<T extends z.ZodString>(schema: T): T {
  return schema.superRefine((value, ctx) => {
    const problem = textProblem(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** safeName for free text (descriptions, prompts): carriage returns are accepted as well. */
export function safeText<T extends z.ZodString>(schema: T): T {
  return schema.superRefine((value, ctx) => {
    const problem = textProblem(value, true);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** Streamed tool arguments arrive as JSON text fragments; this turns the joined text into a ToolCall. */
import type { ToolCall } from './types.js';

export function toolCallFrom(id: string, name: string, json: string): ToolCall {
  // a tool without parameters may stream no argument text at all
  if (json.trim() === '') return { id, name, arguments: {} };
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return { id, name, arguments: parsed as Record<string, unknown> };
    }
  } catch {
    // not JSON: reported through invalid_arguments below
  }
  return { id, name, arguments: {}, invalid_arguments: json };
}

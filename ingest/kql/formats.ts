/**
 * format_datetime and format_timespan: Kusto's constant format patterns
 * (`yyyy-MM-dd HH:mm:ss.fffffff`, `d.hh:mm:ss`) as SQL that concatenates the
 * parts. Only constant patterns are accepted.
 */
import { child, kindOf, type KNode } from './kusto.js';
import { unsupported } from './scalar.js';
import { str } from './sql-text.js';

const TOKEN = /^(yyyy|yy|MM|M|dd|d|HH|H|hh|h|mm|m|ss|s|f{1,7}|F{1,7}|tt)/;

function patternText(node: KNode, what: string): string {
  const token = child(node, 'Token');
  if (kindOf(node) !== 'StringLiteralExpression' || !token) throw unsupported(node, `${what} with a non-constant format`);
  return token.ValueText ?? '';
}

/** Splits a pattern into tokens and literal text (quoted or escaped literals kept as text). */
function tokens(text: string): { token: string | null; literal: string }[] {
  const out: { token: string | null; literal: string }[] = [];
  let index = 0;
  while (index < text.length) {
    const rest = text.slice(index);
    const match = TOKEN.exec(rest);
    if (match) {
      out.push({ token: match[1] as string, literal: '' });
      index += (match[1] as string).length;
    } else if (rest[0] === '\\' && rest.length > 1) {
      out.push({ token: null, literal: rest[1] as string });
      index += 2;
    } else if (rest[0] === "'" || rest[0] === '"') {
      const end = rest.indexOf(rest[0], 1);
      const literal = end < 0 ? rest.slice(1) : rest.slice(1, end);
      out.push({ token: null, literal });
      index += end < 0 ? rest.length : end + 1;
    } else {
      out.push({ token: null, literal: rest[0] as string });
      index += 1;
    }
  }
  return out;
}

const pad = (sql: string, width: number): string => `lpad(CAST(${sql} AS VARCHAR), ${width}, '0')`;

/** Fraction digits of a tick count within the second (0..9999999): `f` keeps zeros, `F` drops trailing ones. */
function fraction(ticks: string, token: string): string {
  const digits = token.length;
  const text = `substring(${pad(ticks, 7)}, 1, ${digits})`;
  return token[0] === 'F' ? `rtrim(${text}, '0')` : text;
}

export function formatDatetime(value: string, node: KNode): string {
  const ticks = `((epoch_us(${value}) % 1000000 + 1000000) % 1000000 * 10)`;
  const parts = tokens(patternText(node, 'format_datetime')).map(({ token, literal }) => {
    switch (token) {
      case null:
        return str(literal);
      case 'yyyy':
        return pad(`year(${value})`, 4);
      case 'yy':
        return pad(`year(${value}) % 100`, 2);
      case 'MM':
        return pad(`month(${value})`, 2);
      case 'M':
        return `CAST(month(${value}) AS VARCHAR)`;
      case 'dd':
        return pad(`day(${value})`, 2);
      case 'd':
        return `CAST(day(${value}) AS VARCHAR)`;
      case 'HH':
        return pad(`hour(${value})`, 2);
      case 'H':
        return `CAST(hour(${value}) AS VARCHAR)`;
      case 'hh':
        return pad(`(hour(${value}) + 11) % 12 + 1`, 2);
      case 'h':
        return `CAST((hour(${value}) + 11) % 12 + 1 AS VARCHAR)`;
      case 'mm':
        return pad(`minute(${value})`, 2);
      case 'm':
        return `CAST(minute(${value}) AS VARCHAR)`;
      case 'ss':
        return pad(`second(${value})`, 2);
      case 's':
        return `CAST(second(${value}) AS VARCHAR)`;
      case 'tt':
        return `(CASE WHEN hour(${value}) < 12 THEN 'AM' ELSE 'PM' END)`;
      default:
        return fraction(ticks, token);
    }
  });
  return `(CASE WHEN ${value} IS NULL THEN '' ELSE ${parts.join(' || ') || "''"} END)`;
}

export function formatTimespan(value: string, node: KNode): string {
  const a = `abs(${value})`;
  const days = `(${a} // 864000000000)`;
  const hours = `((${a} // 36000000000) % 24)`;
  const minutes = `((${a} // 600000000) % 60)`;
  const seconds = `((${a} // 10000000) % 60)`;
  const ticks = `(${a} % 10000000)`;
  const parts = tokens(patternText(node, 'format_timespan')).map(({ token, literal }) => {
    switch (token) {
      case null:
        return str(literal);
      case 'd':
        return `CAST(${days} AS VARCHAR)`;
      case 'dd':
        return pad(days, 2);
      case 'HH':
      case 'hh':
        return pad(hours, 2);
      case 'H':
      case 'h':
        return `CAST(${hours} AS VARCHAR)`;
      case 'mm':
        return pad(minutes, 2);
      case 'm':
        return `CAST(${minutes} AS VARCHAR)`;
      case 'ss':
        return pad(seconds, 2);
      case 's':
        return `CAST(${seconds} AS VARCHAR)`;
      default:
        if (token[0] === 'f' || token[0] === 'F') return fraction(ticks, token);
        return str(token);
    }
  });
  return `(CASE WHEN ${value} IS NULL THEN '' ELSE (CASE WHEN ${value} < 0 THEN '-' ELSE '' END) || ${parts.join(' || ') || "''"} END)`;
}

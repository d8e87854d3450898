/**
 * The OpenAPI document is a contract: every JSON answer a suite receives
 * through `server.request` is validated against the schema `/openapi.json`
 * documents for its route and status. A JSON answer with no documented schema
 * is itself a failure. Non-JSON answers (SSE, files, NDJSON) are not checked.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const API_PREFIX = '/api/v1';

interface Operation {
  readonly template: string;
  readonly pattern: RegExp;
  /** how many segments are `{parameters}`: a literal path wins over a template */
  readonly parameters: number;
  readonly responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}

type Document = { paths: Record<string, Record<string, Operation['responses'] | object>> };

const escapePointer = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly operations = new Map<string, Operation[]>();
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: Document) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(document, 'openapi');
    for (const [template, methods] of Object.entries(document.paths)) {
      const relative = template.startsWith(API_PREFIX) ? template.slice(API_PREFIX.length) : template;
      const source = relative
        .split('/')
        .map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/');
      for (const [method, operation] of Object.entries(methods)) {
        const list = this.operations.get(method.toUpperCase()) ?? [];
        list.push({
          template,
          pattern: new RegExp(`^${source}$`),
          parameters: (relative.match(/\{/g) ?? []).length,
          responses: (operation as { responses: Operation['responses'] }).responses,
        });
        this.operations.set(method.toUpperCase(), list);
      }
    }
    for (const list of this.operations.values()) list.sort((a, b) => a.parameters - b.parameters);
  }

  /** Throws an Error naming the route, the status and Ajv's errors when `body` breaks the document. */
  check(method: string, path: string, status: number, body: unknown): void {
    const pathname = decodeURI(path.split('?')[0]!.split('#')[0]!);
    const operation = this.operations.get(method.toUpperCase())?.find((candidate) => candidate.pattern.test(pathname));
    // no operation: the router's own 404/405 for a path or method nobody serves
    if (!operation) return;
    const key = operation.responses[String(status)] ? String(status) : 'default';
    const schema = operation.responses[key]?.content?.['application/json']?.schema;
    const where = `${method.toUpperCase()} ${operation.template} -> ${status}`;
    if (schema === undefined) throw new Error(`OpenAPI contract: ${where} answered JSON but documents no JSON schema for it`);
    const id = `${method.toUpperCase()} ${operation.template} ${key}`;
    let validate = this.validators.get(id);
    if (!validate) {
      const pointer = ['paths', operation.template, method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema']
        .map(escapePointer)
        .join('/');
      validate = this.ajv.compile({ $ref: `openapi#/${pointer}` });
      this.validators.set(id, validate);
    }
    if (!validate(body)) {
      const errors = (validate.errors ?? []).map((error) => `  ${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
      throw new Error(`OpenAPI contract: ${where} does not match the documented schema:\n${errors.join('\n')}\nbody: ${JSON.stringify(body).slice(0, 2000)}`);
    }
  }
}

export const isJson = (contentType: string | null): boolean => /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/i.test(contentType ?? '');

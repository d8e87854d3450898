/**
 * Path matching. Static segments win over `:params` at the same depth, so
 * `/agents/types` is never read as `/agents/:id`. Built once at start.
 */
import type { AnyRoute, Method } from './route.js';

interface Node {
  readonly children: Map<string, Node>;
  param: { name: string; node: Node } | null;
  readonly routes: Map<Method, AnyRoute>;
}

const newNode = (): Node => ({ children: new Map(), param: null, routes: new Map() });

export type Match =
  | { readonly kind: 'found'; readonly route: AnyRoute; readonly params: Record<string, string> }
  | { readonly kind: 'method_not_allowed'; readonly allowed: readonly Method[] }
  | { readonly kind: 'not_found' };

const splitPath = (path: string): string[] => path.split('/').filter((segment) => segment.length > 0);

/** `/a//b/` and `/a/b` are the same route */
const normalize = (path: string): string => (path.endsWith('/') || path.includes('//') ? '/' + splitPath(path).join('/') : path);

export class Router {
  private readonly root = newNode();
  /** routes without parameters, by `METHOD path`: most hot reads are these, and a Map hit skips the walk */
  private readonly exact = new Map<string, AnyRoute>();

  constructor(routes: readonly AnyRoute[]) {
    for (const route of routes) {
      this.add(route);
      if (!route.path.includes(':')) this.exact.set(`${route.method} ${normalize(route.path)}`, route);
    }
  }

  private add(route: AnyRoute): void {
    let node = this.root;
    for (const segment of splitPath(route.path)) {
      if (segment.startsWith(':')) {
        const name = segment.slice(1);
        if (node.param && node.param.name !== name) {
          throw new Error(`route ${route.path}: parameter :${name} conflicts with :${node.param.name}`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let child = node.children.get(segment);
        if (!child) {
          child = newNode();
          node.children.set(segment, child);
        }
        node = child;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    node.routes.set(route.method, route);
  }

  match(method: string, path: string): Match {
    const exact = this.exact.get(`${method} ${normalize(path)}`);
    if (exact) return { kind: 'found', route: exact, params: {} };
    const params: Record<string, string> = {};
    const node = this.walk(this.root, splitPath(path), 0, params);
    if (!node || node.routes.size === 0) return { kind: 'not_found' };
    const route = node.routes.get(method as Method);
    if (!route) return { kind: 'method_not_allowed', allowed: [...node.routes.keys()] };
    return { kind: 'found', route, params };
  }

  private walk(node: Node, segments: string[], index: number, params: Record<string, string>): Node | null {
    if (index === segments.length) return node;
    const segment = segments[index] as string;
    const child = node.children.get(segment);
    if (child) {
      const found = this.walk(child, segments, index + 1, params);
      if (found && found.routes.size > 0) return found;
    }
    if (node.param) {
      let value: string;
      try {
        value = decodeURIComponent(segment);
      } catch {
        return null;
      }
      const found = this.walk(node.param.node, segments, index + 1, params);
      if (found && found.routes.size > 0) {
        params[node.param.name] = value;
        return found;
      }
    }
    return null;
  }
}

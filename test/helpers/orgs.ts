/**
 * The started server most suites begin with: one organization (`owner`), or
 * two (`alice` and `bob`, each with its owner, an admin) for the isolation
 * checks, where one organization's ids must answer 404 to the other.
 */
import { startTestServer, type Session, type TestServer, type TestServerOptions } from './server.js';

export interface OneOrg {
  readonly server: TestServer;
  readonly owner: Session;
}

export interface TwoOrgs {
  readonly server: TestServer;
  readonly alice: Session;
  readonly bob: Session;
}

export async function oneOrg(env: Record<string, string> = {}, options: TestServerOptions & { readonly name?: string } = {}): Promise<OneOrg> {
  const server = await startTestServer(env, options);
  return { server, owner: await server.register(options.name) };
}

export async function twoOrgs(env: Record<string, string> = {}, options: TestServerOptions = {}): Promise<TwoOrgs> {
  const server = await startTestServer(env, options);
  return { server, alice: await server.register('Alice Inc'), bob: await server.register('Bob Ltd') };
}

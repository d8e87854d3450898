/** What every jenkins tool shares: the client for the source's config. */
import type { ToolContext } from '../../contract.js';
import type { HttpClient } from '../../shared/http-client.js';
import { jenkinsClient, jenkinsConfigOf, type JenkinsConfig } from '../config.js';

export function withJenkins<T>(ctx: ToolContext, work: (client: HttpClient, config: JenkinsConfig) => Promise<T>): Promise<T> {
  ctx.signal.throwIfAborted();
  const config = jenkinsConfigOf(ctx.config);
  return work(jenkinsClient(config, ctx.net), config);
}

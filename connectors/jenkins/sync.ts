/**
 * jenkins sync (ETL). The graph model (keys are qualified by the Jenkins
 * instance, `ci.example.com/...`, so two Jenkins never collide):
 *
 *   (:Job {_key: instance/full_name, kind: job|folder}) -[:CONTAINS]->  (:Job)          (folder -> job)
 *   (:Job)                                              -[:HAS_BUILD]-> (:Build {_key: instance/full_name#number})
 *   (:User {_key: instance/user_id})                    -[:TRIGGERED]-> (:Build)        (a "Started by user" cause)
 *   (:Build)                                            -[:TRIGGERED_BY]-> (:Build)     (an upstream build)
 *
 * The latest BUILDS_PER_JOB builds of every job, folders walked MAX_DEPTH deep.
 */
import { ToolError, type GraphNodeInput, type GraphRelationshipInput, type SyncContext, type SyncReport } from '../contract.js';
import { BUILD_TREE, causesOf, type JenkinsBuild } from './builds.js';
import { jenkinsClient, jenkinsConfigOf, jenkinsInstance, jobPath } from './config.js';
import { listJobs } from './jobs.js';

const MAX_DEPTH = 4;
const MAX_JOBS = 5000;
const BUILDS_PER_JOB = 10;

export async function syncJenkins(ctx: SyncContext): Promise<SyncReport> {
  ctx.signal.throwIfAborted();
  const config = jenkinsConfigOf(ctx.config);
  const client = jenkinsClient(config, ctx.net);
  const instance = jenkinsInstance(config);
  try {
    ctx.progress(0, 'listing jobs');
    const { jobs, truncated } = await listJobs(client, ctx.signal, '', MAX_DEPTH, MAX_JOBS);
    let nodes = 0;
    let relationships = 0;
    let builds = 0;
    const jobKey = (fullName: string): string => `${instance}/${fullName}`;

    const jobNodes: GraphNodeInput[] = jobs.map((job) => ({
      label: 'Job',
      properties: {
        _key: jobKey(job.full_name),
        full_name: job.full_name,
        kind: job.kind,
        type: job.type,
        status: job.status,
        url: job.url,
        system: 'jenkins',
      },
    }));
    const containment: GraphRelationshipInput[] = jobs
      .filter((job) => job.full_name.includes('/'))
      .map((job) => ({
        type: 'CONTAINS',
        from_label: 'Job',
        from_key: jobKey(job.full_name.slice(0, job.full_name.lastIndexOf('/'))),
        to_label: 'Job',
        to_key: jobKey(job.full_name),
      }));
    await ctx.graph?.upsertNodes(jobNodes);
    await ctx.graph?.upsertRelationships(containment);
    nodes += jobNodes.length;
    relationships += containment.length;

    const buildable = jobs.filter((job) => job.kind === 'job');
    for (const [index, job] of buildable.entries()) {
      ctx.signal.throwIfAborted();
      const { data } = await client.json<{ builds?: JenkinsBuild[] }>({
        path: `${jobPath(job.full_name)}/api/json`,
        query: { tree: `builds[${BUILD_TREE}]{0,${BUILDS_PER_JOB}}` },
        signal: ctx.signal,
      });
      const batchNodes: GraphNodeInput[] = [];
      const batchRelationships: GraphRelationshipInput[] = [];
      for (const build of data?.builds ?? []) {
        const buildKey = `${jobKey(job.full_name)}#${build.number}`;
        batchNodes.push({
          label: 'Build',
          properties: {
            _key: buildKey,
            job: job.full_name,
            number: build.number,
            result: build.result,
            building: build.building ?? false,
            started_at: new Date(build.timestamp).toISOString(),
            duration_s: Math.round(build.duration / 1000),
            url: build.url,
            system: 'jenkins',
          },
        });
        batchRelationships.push({ type: 'HAS_BUILD', from_label: 'Job', from_key: jobKey(job.full_name), to_label: 'Build', to_key: buildKey });
        for (const cause of causesOf(build)) {
          if (cause.user_id) {
            batchNodes.push({
              label: 'User',
              properties: { _key: `${instance}/${cause.user_id}`, login: cause.user_id, name: cause.user_name, system: 'jenkins' },
            });
            batchRelationships.push({ type: 'TRIGGERED', from_label: 'User', from_key: `${instance}/${cause.user_id}`, to_label: 'Build', to_key: buildKey });
          }
          if (cause.upstream_job && cause.upstream_build !== null) {
            batchRelationships.push({
              type: 'TRIGGERED_BY',
              from_label: 'Build',
              from_key: buildKey,
              to_label: 'Build',
              to_key: `${jobKey(cause.upstream_job)}#${cause.upstream_build}`,
            });
          }
        }
      }
      const unique = [...new Map(batchNodes.map((node) => [`${node.label}:${node.properties._key}`, node])).values()];
      await ctx.graph?.upsertNodes(unique);
      await ctx.graph?.upsertRelationships(batchRelationships);
      nodes += unique.length;
      relationships += batchRelationships.length;
      builds += (data?.builds ?? []).length;
      ctx.progress((index + 1) / buildable.length, `synced ${job.full_name}`);
    }
    if (buildable.length === 0) ctx.progress(1, 'no jobs');
    return { nodes, relationships, details: { jobs: buildable.length, folders: jobs.length - buildable.length, builds, jobs_truncated: truncated } };
  } catch (error) {
    ctx.signal.throwIfAborted();
    throw ToolError.is(error) ? new Error(`Jenkins sync failed: ${error.message}`, { cause: error }) : error;
  }
}

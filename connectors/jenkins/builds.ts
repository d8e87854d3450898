/** Jenkins builds as the tools present them: the `tree` that asks for them, causes flattened, times in ISO. */

/** The build fields every tool asks for (`actions[causes[...]]` carries why a build ran). */
export const BUILD_TREE =
  'number,result,building,timestamp,duration,url,displayName,actions[causes[shortDescription,userId,userName,upstreamProject,upstreamBuild]]';

interface JenkinsCause {
  readonly shortDescription?: string;
  readonly userId?: string | null;
  readonly userName?: string | null;
  readonly upstreamProject?: string;
  readonly upstreamBuild?: number;
}

export interface JenkinsBuild {
  readonly number: number;
  /** null while it runs */
  readonly result: string | null;
  readonly building?: boolean;
  readonly timestamp: number;
  readonly duration: number;
  readonly url: string;
  readonly displayName?: string;
  /** most actions are `{}` or `{ _class }`; a CauseAction has `causes` */
  readonly actions?: readonly ({ readonly causes?: readonly JenkinsCause[] } | null)[];
}

export interface PresentedBuild {
  number: number;
  result: string | null;
  building: boolean;
  started_at: string;
  duration_s: number;
  url: string;
  causes: { description: string; user_id: string | null; user_name: string | null; upstream_job: string | null; upstream_build: number | null }[];
}

export function causesOf(build: JenkinsBuild): PresentedBuild['causes'] {
  return (build.actions ?? []).flatMap((action) =>
    (action?.causes ?? []).map((cause) => ({
      description: cause.shortDescription ?? '',
      user_id: cause.userId ?? null,
      user_name: cause.userName ?? null,
      upstream_job: cause.upstreamProject ?? null,
      upstream_build: cause.upstreamBuild ?? null,
    })),
  );
}

export function presentBuild(build: JenkinsBuild): PresentedBuild {
  return {
    number: build.number,
    result: build.result,
    building: build.building ?? false,
    started_at: new Date(build.timestamp).toISOString(),
    duration_s: Math.round(build.duration / 1000),
    url: build.url,
    causes: causesOf(build),
  };
}

/** FAILURE and UNSTABLE (tests failed) are the builds someone has to look at */
export const FAILED_RESULTS: ReadonlySet<string> = new Set(['FAILURE', 'UNSTABLE']);

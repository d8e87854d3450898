/** The shapes every route a worker calls mid-job shares: the job in the path, its lease's fence. */
import { z } from 'zod';

export const workerJobParams = z.strictObject({ job_id: z.string().min(1).max(200) });
export const fence = z.string().min(1).max(100);
export const fenceBody = z.strictObject({ fence });
export const fenceQuery = z.strictObject({ fence });

/** Schemas shared by the resource routes: the id path parameter and the fields every stored record shows. */
import { z } from 'zod';

export const idParams = z.object({ id: z.string().min(1).max(100) });

/** Fields every stored record shows. */
export const storedSchema = { id: z.string(), created_at: z.string(), updated_at: z.string() };

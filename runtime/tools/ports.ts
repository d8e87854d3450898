/**
 * The host side of the connector ports (contract `requires`): what a tool
 * call gets in `ctx.ports`, and how a port turns the platform's errors into
 * ones a tool can read without importing the platform.
 */
import { ToolError, type PortName, type PortOffers, type Ports, type PortScope } from '../../connectors/contract.js';
import { ServiceError } from '../errors.js';

/** The ports `requires` names, bound to the call's scope; a port the host does not offer is left out (the loader refused such plugins). */
export function bindPorts(offers: PortOffers | undefined, requires: readonly PortName[], scope: PortScope): Ports {
  const ports: { [N in PortName]?: unknown } = {};
  for (const name of requires) {
    const bind = offers?.[name];
    if (bind !== undefined) ports[name] = bind(scope);
  }
  return ports as Ports;
}

/** A ServiceError the caller can fix as the ToolError with the same code, message and details (a port's failures reach plugins as contract errors). */
export function toolErrorOf(error: unknown): unknown {
  if (error instanceof ServiceError && error.fault === 'user')
    return new ToolError(error.code, error.message, error.details ? { ...error.details } : undefined);
  return error;
}

/** Runs a port call, throwing what the caller can fix as ToolErrors (see toolErrorOf). */
export async function asToolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toolErrorOf(error);
  }
}

/** The runtime clock the suites inject: XState's simulated clock, so time moves only when the test moves it. */
import { SimulatedClock } from 'xstate';
import type { RuntimeClock } from '../../runtime/supervisor.js';

export function simulatedClock(startIso: string): SimulatedClock & RuntimeClock {
  const clock = new SimulatedClock();
  clock.set(Date.parse(startIso));
  return clock;
}

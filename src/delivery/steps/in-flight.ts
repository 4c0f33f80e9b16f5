/**
 * The first follow-up step: a remediation in flight (src/delivery/remediation.ts). While one runs,
 * or when this look had to start again one a stopped process left, the pull request keeps its gate
 * and the other steps wait for the next look (one follow-up action in flight per PR). One a stopped
 * process left finished (its push done here if need be) is settled, and the other steps go on.
 */
import type { FollowStep } from '../follow.js';

export const inFlightStep: FollowStep = async (context) => {
  const { deps, record } = context;
  const state = (await deps.inFlight?.(record)) ?? 'none';
  // Settled (a stopped process left it finished): the other steps look at once.
  if (state === 'none' || state === 'settled') return undefined;
  return {
    ...(record.gate && record.gate !== 'open' ? { gate: record.gate } : {}),
    detail: record.gateDetail ?? 'a remediation run is in flight',
    acted: true,
  };
};

/**
 * The first follow-up step: a remediation in flight (src/delivery/remediation.ts). While one runs,
 * or when this look had to finish or restart one a stopped process left, the pull request keeps
 * its gate and the other steps wait for the next look (one follow-up action in flight per PR).
 */
import type { FollowStep } from '../follow.js';

export const inFlightStep: FollowStep = async (context) => {
  const { deps, record } = context;
  const state = (await deps.inFlight?.(record)) ?? 'none';
  if (state === 'none') return undefined;
  return {
    ...(record.gate && record.gate !== 'open' ? { gate: record.gate } : {}),
    detail: record.gateDetail ?? 'a remediation run is in flight',
    acted: true,
  };
};

import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that measure time closely (kill -9 and take-back bounds, stall and lease clocks, a
 * browser's waits) or load the machine on their own (hundreds of runs, fleets of processes). They
 * run one at a time, after the rest, so no other file competes with them for the two cores.
 */
const ALONE = [
  'bench/**/*.test.ts',
  'src/fleet/**/*.test.ts',
  'src/process/**/*.test.ts',
  'test/e2e/board-browser.test.ts',
  'test/e2e/coordinated-writes.test.ts',
  'test/e2e/delivery-storm.test.ts',
  'test/e2e/fleet-acceptance.test.ts',
  'test/e2e/fleet-db-faults-unseen.test.ts',
  'test/e2e/fleet-placement.test.ts',
  'test/e2e/fleet-view.test.ts',
  'test/e2e/fleet.test.ts',
  'test/e2e/leases.test.ts',
  'test/e2e/liveness.test.ts',
  'test/e2e/load.test.ts',
  'test/e2e/storm.test.ts',
];

/**
 * Long files that mostly wait (a fleet of sleeping agents through minutes of database faults) but
 * are sensitive to a crowded machine: each starts first, in a third worker of its own, beside the
 * files that run two at a time, instead of alone at the end where one core would idle for minutes.
 */
const BESIDE = ['test/e2e/fleet-db-faults.test.ts'];

/** Vitest's order (on a fresh clone: the largest files first), with the BESIDE files before all. */
class BesideFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const beside = (spec: TestSpecification) => BESIDE.some((path) => spec.moduleId.endsWith(`/${path}`));
    return [...sorted.filter(beside), ...sorted.filter((spec) => !beside(spec))];
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    sequence: { sequencer: BesideFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'together',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...ALONE],
          // Most files wait on processes, git and sockets more than on the CPU: two at once, and a
          // third worker for the BESIDE files (first in the order).
          maxWorkers: 3,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

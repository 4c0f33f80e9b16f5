import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that measure time closely (kill -9 and take-back bounds, stall and lease clocks, a
 * browser's waits) or load the machine on their own (hundreds of runs, fleets of processes). They
 * run one at a time, after the rest, so no other file competes with them for the two cores.
 */
const ALONE = [
  'bench/**/*.test.ts',
  'src/process/**/*.test.ts',
  'test/e2e/board-browser.test.ts',
  'test/e2e/delivery-storm.test.ts',
  'test/e2e/fleet-view.test.ts',
  'test/e2e/fleet.test.ts',
  'test/e2e/leases.test.ts',
  'test/e2e/liveness.test.ts',
  'test/e2e/load.test.ts',
  'test/e2e/storm.test.ts',
];

/**
 * Files kept away from the crowded part of the run that mostly wait (fleets of sleeping agents,
 * database faults at the default heartbeat settings, PostgreSQL's round trips): each used 0.1-0.8
 * of one core when it ran alone (machine CPU sampled around a run of the alone files, 2026-12-07),
 * so two of them at once leave the machine about a third idle. They run two at a time, in this
 * order (the two longest first, side by side), after the files that run together and before the
 * ALONE ones.
 */
const PAIRED = [
  'test/e2e/fleet-db-faults-unseen.test.ts',
  'test/e2e/fleet-acceptance.test.ts',
  'test/e2e/fleet-placement.test.ts',
  'test/e2e/coordinated-writes.test.ts',
  'src/fleet/fleet.test.ts',
  'src/fleet/**/*.test.ts',
];

/**
 * Long files that mostly wait (a fleet of sleeping agents through minutes of database faults) but
 * are sensitive to a crowded machine: each starts first, in a third worker of its own, beside the
 * files that run two at a time, instead of alone at the end where one core would idle for minutes.
 */
const BESIDE = ['test/e2e/fleet-db-faults.test.ts'];

/** Whether a file (its path from the root) matches one of the patterns above. */
function matches(path: string, pattern: string): boolean {
  const folder = pattern.endsWith('/**/*.test.ts') ? pattern.slice(0, -'**/*.test.ts'.length) : undefined;
  return folder === undefined ? path === pattern : path.startsWith(folder) && path.endsWith('.test.ts');
}

const root = fileURLToPath(new URL('./', import.meta.url));

/**
 * Vitest's order (on a fresh clone: the largest files first), with the BESIDE files before all and
 * the PAIRED ones in the order of that list.
 */
class BesideFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const path = (spec: TestSpecification) =>
      spec.moduleId.startsWith(root) ? spec.moduleId.slice(root.length) : spec.moduleId;
    const beside = (spec: TestSpecification) => BESIDE.some((pattern) => matches(path(spec), pattern));
    const paired = (spec: TestSpecification) => PAIRED.findIndex((pattern) => matches(path(spec), pattern));
    const rest = sorted.filter((spec) => !beside(spec));
    const inPairs = rest.filter((spec) => paired(spec) >= 0).sort((a, b) => paired(a) - paired(b));
    return [...sorted.filter(beside), ...inPairs, ...rest.filter((spec) => paired(spec) < 0)];
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
          exclude: [...configDefaults.exclude, ...PAIRED, ...ALONE],
          // Most files wait on processes, git and sockets more than on the CPU: two at once, and a
          // third worker for the BESIDE files (first in the order).
          maxWorkers: 3,
          // A worker runs file after file in one process, its modules loaded once: the unit tests'
          // files took 110 s isolated and 75 s this way (import time 55 s -> 11 s), all passing.
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'paired',
          include: PAIRED,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});

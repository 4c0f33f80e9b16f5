import { configDefaults, defineConfig } from 'vitest/config';

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
  'test/e2e/fleet*.test.ts',
  'test/e2e/leases.test.ts',
  'test/e2e/liveness.test.ts',
  'test/e2e/load.test.ts',
  'test/e2e/storm.test.ts',
];

export default defineConfig({
  test: {
    pool: 'forks',
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
          // Most files wait on processes, git and sockets more than on the CPU: two at once.
          maxWorkers: 2,
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

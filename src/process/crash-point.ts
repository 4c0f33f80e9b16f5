/**
 * Crash points for crash-safety tests: with `CURUPIRA_TEST_CRASH_AT=<name>` in its environment, the
 * process kills itself with SIGKILL when it reaches the point of that name — the same instant death
 * a power cut or `kill -9` brings, at a step a test could not otherwise hit reliably. Without the
 * variable this does nothing.
 */
export type CrashPoint =
  | 'agent-exited'
  | 'run-cleaned'
  | 'write-enqueued'
  | 'write-posted'
  | 'delivery-begun'
  | 'delivery-pushed'
  | 'delivery-pr-opened'
  | 'delivery-recorded'
  | 'delivery-linked'
  | 'remediation-action-set'
  | 'remediation-started'
  | 'remediation-pushing'
  | 'remediation-push-done'
  | 'remediation-pushed'
  | 'remediation-finished';

/** How many times this process reached each point (for `<name>#<n>`). */
const reached = new Map<string, number>();

/** `<name>` kills at the first time the point is reached, `<name>#<n>` at the n-th time. */
export function crashPoint(name: CrashPoint): void {
  const wanted = process.env.CURUPIRA_TEST_CRASH_AT;
  if (wanted === undefined) return;
  const [point, nth] = wanted.split('#');
  if (point !== name) return;
  const count = (reached.get(name) ?? 0) + 1;
  reached.set(name, count);
  if (count !== (nth === undefined ? 1 : Number(nth))) return;
  process.kill(process.pid, 'SIGKILL');
}

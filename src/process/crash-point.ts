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
  | 'remediation-action-set'
  | 'remediation-started'
  | 'remediation-pushing'
  | 'remediation-push-done'
  | 'remediation-pushed'
  | 'remediation-finished';

export function crashPoint(name: CrashPoint): void {
  if (process.env.CURUPIRA_TEST_CRASH_AT !== name) return;
  process.kill(process.pid, 'SIGKILL');
}

/**
 * The findings tools a review's agent reports through (issue 29): `findings_list` (what the watch
 * already knows), `findings_report` (one problem), `findings_resolve` (a known problem is fixed),
 * `findings_done` (the review is over: its summary and the commit it reviewed). They act for one run
 * only: the watch, repository and commit come from the run, never from the agent.
 */
import { z } from 'zod';
import { findingFingerprint, findingPathProblem } from '../review/fingerprint.js';
import { type ReviewDone, reviewDoneKey } from '../review/progress.js';
import { FINDING_SEVERITIES, type FindingRecord, type Store } from '../store/types.js';
import { type McpTool, type ToolAnswer, tool } from './stdio.js';

/** The run the tools act for. */
export interface ReviewRun {
  id: string;
  /** The watch: the automation the run belongs to. */
  watch: string;
  repo: string;
  /** The commit the review is pinned to. */
  commit: string;
}

function line(f: FindingRecord): string {
  const lines = f.lineStart === f.lineEnd ? `${f.lineStart}` : `${f.lineStart}-${f.lineEnd}`;
  return `#${f.id} [${f.status}] ${f.severity} ${f.category} ${f.file}:${lines} ${f.title}`;
}

const Text = (max: number) => z.string().trim().min(1).max(max);

export function findingsTools(
  run: ReviewRun,
  withStore: <T>(use: (store: Store) => Promise<T>) => Promise<T>,
): McpTool[] {
  const refuse = (text: string): ToolAnswer => ({ text, data: { error: text }, isError: true });
  return [
    tool({
      name: 'findings_list',
      description:
        'The findings this watch already has (open by default): report one again if it is still there, resolve it if it is fixed.',
      input: z.object({ status: z.enum(['open', 'resolved', 'all']).default('open') }),
      async call({ status }) {
        const findings = await withStore((store) =>
          store.listFindings({ watch: run.watch, ...(status === 'all' ? {} : { status }) }),
        );
        return {
          text:
            findings.length > 0
              ? findings.map(line).join('\n')
              : `No ${status === 'all' ? '' : `${status} `}findings.`,
          data: { findings },
        };
      },
    }),
    tool({
      name: 'findings_report',
      description:
        'Report one problem found in the code: file (relative to the repository root), line range, severity, category, a short title and the detail. The same problem reported again (same file, category and title) is the same finding.',
      input: z.object({
        file: Text(500),
        line_start: z.number().int().min(1),
        line_end: z.number().int().min(1).optional(),
        severity: z.enum(FINDING_SEVERITIES),
        category: Text(60).describe('e.g. security, bug, performance, maintainability'),
        title: Text(200),
        detail: Text(8000),
      }),
      async call(args) {
        const problem = findingPathProblem(args.file);
        if (problem) return refuse(problem);
        const lineEnd = args.line_end ?? args.line_start;
        if (lineEnd < args.line_start) return refuse('line_end must not come before line_start');
        const file = args.file.replace(/^\.\//, '');
        const { finding, outcome } = await withStore((store) =>
          store.recordFinding({
            watch: run.watch,
            repo: run.repo,
            fingerprint: findingFingerprint({ file, category: args.category, title: args.title }),
            file,
            lineStart: args.line_start,
            lineEnd,
            severity: args.severity,
            category: args.category,
            title: args.title,
            detail: args.detail,
            commit: run.commit,
            runId: run.id,
          }),
        );
        // A finding this same run first reported (the agent sent it twice): not "known" from before.
        const said =
          outcome === 'seen-again' && finding.firstRunId === run.id
            ? 'Already reported in this run; updated'
            : { new: 'Recorded', 'seen-again': 'Already known; seen again', reopened: 'Reopened' }[outcome];
        return { text: `${said}: ${line(finding)}`, data: { outcome, finding } };
      },
    }),
    tool({
      name: 'findings_resolve',
      description:
        'Mark an open finding of this watch resolved (it is fixed at the reviewed commit), saying how.',
      input: z.object({ id: z.number().int().min(1), resolution: Text(2000) }),
      async call({ id, resolution }) {
        const resolved = await withStore(async (store) => {
          const mine = (await store.listFindings({ watch: run.watch, status: 'open' })).some(
            (f) => f.id === id,
          );
          return mine
            ? store.resolveFinding(id, { commit: run.commit, runId: run.id, resolution })
            : undefined;
        });
        if (!resolved) return refuse(`no open finding #${id} of this watch; findings_list shows them`);
        return { text: `Resolved: ${line(resolved)}`, data: { finding: resolved } };
      },
    }),
    tool({
      name: 'findings_done',
      description:
        'End the review: a summary of what was reviewed and found, and the commit reviewed. Call it once, last.',
      input: z.object({ summary: Text(8000), reviewed_commit: Text(64) }),
      async call({ summary, reviewed_commit }) {
        if (reviewed_commit !== run.commit && !run.commit.startsWith(reviewed_commit))
          return refuse(`this review is pinned to ${run.commit}; reviewed_commit must be that commit`);
        const done: ReviewDone = { summary, reviewedCommit: run.commit, at: new Date().toISOString() };
        await withStore((store) => store.setMeta(reviewDoneKey(run.id), JSON.stringify(done)));
        return { text: `Review done at ${run.commit}.`, data: { ...done } };
      },
    }),
  ];
}

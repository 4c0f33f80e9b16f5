/**
 * The result tool (issue 32): the agent of a run whose automation declares `outcomes` reports its
 * one structured result through `result_report` instead of (or besides) the result line of its
 * final message. It acts for one run only (`curupira mcp --run <id>`); the outcome is checked
 * against that automation's closed set by the same seam as every reported result
 * (src/pipeline/report.ts, `recordReportedResult`).
 */
import { z } from 'zod';
import { outcomeSet } from '../core/result-line.js';
import { recordReportedResult } from '../pipeline/report.js';
import type { Store } from '../store/types.js';
import { type McpTool, tool } from './stdio.js';

/** The run the tool reports for, and its automation's declared outcomes. */
export interface ReportingRun {
  id: string;
  outcomes: readonly string[];
}

export function resultTools(
  run: ReportingRun,
  withStore: <T>(use: (store: Store) => Promise<T>) => Promise<T>,
): McpTool[] {
  const set = outcomeSet(run.outcomes);
  return [
    tool({
      name: 'result_report',
      description: `Report what this run did, once, at the end: one outcome of ${set.join(', ')}; a one-line reason (required for noop, skipped and failed); the issue or pull request number it is about; optional fields. A second call replaces the first. It takes the place of the result line of the final message.`,
      input: z.object({
        outcome: z
          .string()
          .min(1)
          .max(80)
          .describe(`One of: ${set.join(', ')}`),
        reason: z.string().max(2000).optional().describe('One line: why (e.g. "fixed on main by #9")'),
        number: z.number().int().min(1).optional().describe('The issue or pull request number (#N)'),
        fields: z
          .record(z.string(), z.string())
          .optional()
          .describe('More of the result, e.g. { "duplicate_of": "12" }'),
      }),
      async call({ outcome, reason, number, fields }) {
        if (['noop', 'skipped', 'failed'].includes(outcome) && !reason?.trim()) {
          const text = `${outcome} needs a reason: say why in one line`;
          return { text, data: { error: text }, isError: true };
        }
        const answer = await withStore((store) =>
          recordReportedResult(
            store,
            run.id,
            {
              outcome,
              ...(reason === undefined ? {} : { reason }),
              ...(number === undefined ? {} : { item: number }),
              ...(fields === undefined ? {} : { fields }),
            },
            run.outcomes,
          ),
        );
        if (!answer.ok) return { text: answer.error, data: { error: answer.error }, isError: true };
        const { result } = answer;
        const line = `${result.item === undefined ? '' : `#${result.item} `}${result.outcome}${result.reason ? `: ${result.reason}` : ''}`;
        return { text: `Recorded: ${line}`, data: { result: { ...result } } };
      },
    }),
  ];
}

/**
 * A Jira Software board column as a filter: the statuses mapped to `column` on `board`, read from
 * the board's configuration (Agile REST API, `GET /rest/agile/1.0/board/{boardId}/configuration`),
 * which the JQL then names by id (`status in (10001, 10002)`).
 */
import { SourceRequestError } from '../../core/errors.js';
import type { JiraClient } from './client.js';
import type { JiraAutomation } from './schema.js';

/** The part of Jira Software's `BoardConfigBean` read here. */
interface BoardConfiguration {
  id?: number;
  name?: string;
  columnConfig?: { columns?: { name?: string; statuses?: { id?: string }[] }[] };
}

export interface BoardColumn {
  board: string;
  column: string;
  /** Status ids mapped to the column, Jira's numbers as text. */
  statuses: string[];
}

/** The column's statuses; a missing board or column is an error that names the board's columns. */
export async function boardColumn(
  client: JiraClient,
  config: Pick<JiraAutomation, 'board' | 'column'>,
  signal?: AbortSignal,
): Promise<BoardColumn> {
  const configuration = await client.get<BoardConfiguration>(
    `/rest/agile/1.0/board/${config.board}/configuration`,
    signal,
  );
  const columns = configuration.columnConfig?.columns ?? [];
  const wanted = (config.column ?? '').trim().toLowerCase();
  const found = columns.find((c) => (c.name ?? '').trim().toLowerCase() === wanted);
  const board = `${configuration.name ?? 'board'} (${config.board})`;
  if (!found)
    throw new SourceRequestError(
      `Jira board ${board} has no column "${config.column}"; its columns: ${columns.map((c) => `"${c.name ?? ''}"`).join(', ') || 'none'}`,
    );
  const statuses = (found.statuses ?? []).map((s) => s.id ?? '');
  const odd = statuses.find((id) => !/^\d+$/.test(id));
  if (odd !== undefined)
    throw new SourceRequestError(
      `Jira board ${board} maps column "${found.name}" to a status id that is not a number`,
    );
  return { board, column: found.name ?? config.column ?? '', statuses };
}

import { dirname, join } from 'node:path';
import type { Settings } from '../config/types.js';

/** The folder holding the state file, its lock, logs and transcripts. */
export function stateDir(settings: Settings): string {
  return dirname(settings.execution.state_db_path);
}

export function transcriptsDir(settings: Settings): string {
  return join(stateDir(settings), 'transcripts');
}

/** The reference's log file: `~/.curupira/logs/curupira.log` with the default state path. */
export function logFile(settings: Settings): string {
  return join(stateDir(settings), 'logs', 'curupira.log');
}

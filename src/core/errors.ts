/**
 * Typed errors with a stable code. Callers match on the class or `code`, never on message text.
 * `src/core/outcome.ts` is the one place that maps an error to what happens to a run or a poll;
 * `src/cli/program.ts` maps a code to the prefix of the message a command prints.
 */

export type ErrorCode =
  | 'config'
  | 'config_file_not_found'
  | 'github_auth'
  | 'github_rate_limit'
  | 'github_transient'
  | 'github_request'
  | 'github_graphql'
  | 'source_auth'
  | 'source_rate_limit'
  | 'source_request'
  | 'agent_not_found'
  | 'agent_start'
  | 'workspace'
  | 'workspace_path'
  | 'setup_script'
  | 'prompt_render'
  | 'state'
  | 'state_locked'
  | 'dispatch'
  | 'usage'
  | 'control';

export class CurupiraError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** One problem found in a settings file, located as precisely as the file allows. */
export interface ConfigIssue {
  /** Dotted key path, e.g. `automations.triage.labels[1]`; empty for file-level problems. */
  path: string;
  message: string;
  file?: string;
  line?: number;
  column?: number;
}

export function formatConfigIssue(issue: ConfigIssue): string {
  const where = issue.file
    ? ` (${issue.file}${issue.line ? `:${issue.line}${issue.column ? `:${issue.column}` : ''}` : ''})`
    : '';
  return issue.path ? `${issue.path}: ${issue.message}${where}` : `${issue.message}${where}`;
}

/** Every problem in a settings file, reported at once. */
export class ConfigError extends CurupiraError {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], code: ErrorCode = 'config') {
    const lines = issues.map(formatConfigIssue);
    super(
      code,
      lines.length === 1
        ? lines[0]!
        : `${lines.length} problems:\n${lines.map((l) => `  - ${l}`).join('\n')}`,
    );
    this.issues = issues;
  }
}

export class GitHubError extends CurupiraError {
  readonly status: number | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; status?: number }) {
    super(code, message, options);
    this.status = options?.status;
  }
}

/** Token missing, `gh` missing, or GitHub answered 401. */
export class GitHubAuthError extends GitHubError {
  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super('github_auth', message, options);
  }
}

/** A primary or secondary rate limit that outlasted our patience; `resetAt` says when to try again. */
export class GitHubRateLimitError extends GitHubError {
  readonly resetAt: Date | undefined;

  constructor(message: string, options?: { cause?: unknown; status?: number; resetAt?: Date }) {
    super('github_rate_limit', message, options);
    this.resetAt = options?.resetAt;
  }
}

/** 5xx, network errors, timeouts, malformed responses: worth trying again later. */
export class GitHubTransientError extends GitHubError {
  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super('github_transient', message, options);
  }
}

/** A request GitHub refused for good (4xx other than auth and rate limits). */
export class GitHubRequestError extends GitHubError {
  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super('github_request', message, options);
  }
}

/** GraphQL answered with `errors`. */
export class GitHubGraphQLError extends GitHubError {
  readonly errors: readonly { message: string; type?: string; path?: readonly (string | number)[] }[];
  /**
   * What GitHub answered beside the errors, when it answered anything: one field that failed (an
   * issue that does not exist, `NOT_FOUND` at its path) leaves the others of the query answered.
   */
  readonly data: unknown;

  constructor(
    errors: readonly { message: string; type?: string; path?: readonly (string | number)[] }[],
    options?: { cause?: unknown; status?: number; data?: unknown },
  ) {
    super('github_graphql', `GitHub GraphQL error: ${errors.map((e) => e.message).join('; ')}`, options);
    this.errors = errors;
    this.data = options?.data ?? null;
  }
}

/**
 * A source other than GitHub (Linear, Jira) refused its credential, or none was given. The message
 * says where the credential was looked for, never its value.
 */
export class SourceAuthError extends CurupiraError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('source_auth', message, options);
  }
}

/** A source other than GitHub said to wait; `resetAt` says when it takes requests again. */
export class SourceRateLimitError extends CurupiraError {
  readonly resetAt: Date | undefined;

  constructor(message: string, options?: { cause?: unknown; resetAt?: Date }) {
    super('source_rate_limit', message, options);
    this.resetAt = options?.resetAt;
  }
}

/** A source other than GitHub refused a request, failed, or answered something unreadable. */
export class SourceRequestError extends CurupiraError {
  readonly status: number | undefined;

  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super('source_request', message, options);
    this.status = options?.status;
  }
}

export class AgentNotFoundError extends CurupiraError {
  readonly executable: string;

  constructor(executable: string) {
    super('agent_not_found', `Required executable not found: ${executable}`);
    this.executable = executable;
  }
}

export class WorkspaceError extends CurupiraError {
  constructor(
    message: string,
    options?: { cause?: unknown; code?: 'workspace' | 'workspace_path' | 'setup_script' },
  ) {
    super(options?.code ?? 'workspace', message, options);
  }
}

export class PromptRenderError extends CurupiraError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('prompt_render', message, options);
  }
}

export class StateError extends CurupiraError {
  constructor(message: string, options?: { cause?: unknown; code?: 'state' | 'state_locked' }) {
    super(options?.code ?? 'state', message, options);
  }
}

/** A command-line mistake (conflicting flags, bad argument). */
export class UsageError extends CurupiraError {
  constructor(message: string) {
    super('usage', message);
  }
}

/** Why an operator's action (run now, pause, cancel, retry…) was refused; stable, for the API and the CLI. */
export type ControlReason =
  | 'automation_not_found'
  | 'automation_disabled'
  | 'run_not_found'
  | 'run_not_active'
  | 'run_active'
  | 'not_retryable'
  | 'worktree_not_kept'
  | 'scan_not_offered';

export class ControlError extends CurupiraError {
  readonly reason: ControlReason;

  constructor(reason: ControlReason, message: string) {
    super('control', message);
    this.reason = reason;
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Why a classifier could not answer. Each kind blocks a run when the classifier is required. */
export type ClassifierFailureKind = 'missing' | 'failed' | 'timeout';

export class ClassifierError extends Error {
  constructor(
    readonly kind: ClassifierFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'ClassifierError';
  }
}

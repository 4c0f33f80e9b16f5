/**
 * A look at what the agent wrote before it leaves the machine (issue 27, point 6): the commits a
 * delivery (or a checkpoint) would push are checked for
 * - **secrets** in added lines: what the redaction recognises (`src/security/redact.ts`: the
 *   values of every secret curupira knows — the GitHub token, every secret-looking variable of
 *   its environment, registered when it starts and again here — and the token and key patterns);
 * - **edits to agent or CI configuration** (`src/agents/config-paths.ts`) that the automation did
 *   not allow with `allow_config_edits`.
 * A hit holds the delivery for a person instead of pushing. Findings name the file, the line and
 * the kind of hit, never the secret itself.
 */
import { configKind } from '../agents/config-paths.js';
import { errorMessage } from '../core/errors.js';
import { redact, registerSecretEnv } from '../security/redact.js';
import { git } from '../workspace/git.js';

export interface DeliveryFinding {
  kind: 'secret' | 'agent-config' | 'ci-config';
  path: string;
  /** The line in the new file, for a secret. */
  line?: number;
}

/** `allow_config_edits`: `true` allows every configuration edit; a list allows these paths (a `dir/` prefix, or a file). */
export type AllowConfigEdits = boolean | readonly string[];

export interface ReviewRequest {
  cwd: string;
  /** The revision the work started from (compared through the merge base: `from...to`). */
  from: string;
  to: string;
  allow: AllowConfigEdits | undefined;
  /** The engine's environment: its secret-looking values are secrets too. */
  env?: NodeJS.ProcessEnv;
}

function allowed(path: string, allow: AllowConfigEdits | undefined): boolean {
  if (allow === true) return true;
  if (!allow) return false;
  return allow.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p));
}

/** A path from a diff header: git quotes one with special characters (shown as it is, unquoted). */
function headerPath(raw: string): string {
  return raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
}

/** Every finding in the commits `from...to`; throws when git cannot say (the caller holds). */
export async function reviewDelivery(request: ReviewRequest): Promise<DeliveryFinding[]> {
  const { cwd, from, to } = request;
  if (request.env) registerSecretEnv(request.env);
  const range = `${from}...${to}`;
  const findings: DeliveryFinding[] = [];
  const names = await git(['diff', '--name-only', '-z', '--no-renames', range, '--'], { cwd });
  for (const path of names.split('\0').filter(Boolean)) {
    const kind = configKind(path);
    if (kind && !allowed(path, request.allow))
      findings.push({ kind: kind === 'agent' ? 'agent-config' : 'ci-config', path });
  }
  const diff = await git(
    ['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-renames', '-U0', range, '--'],
    { cwd },
  );
  let path = '';
  let line = 0;
  const seen = new Set<string>();
  for (const text of diff.split('\n')) {
    if (text.startsWith('+++ ')) {
      const target = text.slice(4);
      path = target === '/dev/null' ? '' : headerPath(target).replace(/^b\//, '');
      continue;
    }
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text);
    if (hunk) {
      line = Number(hunk[1]);
      continue;
    }
    if (text.startsWith('+') && path !== '') {
      const added = text.slice(1);
      if (redact(added) !== added && !seen.has(`${path}:${line}`)) {
        seen.add(`${path}:${line}`);
        findings.push({ kind: 'secret', path, line });
      }
      line += 1;
    }
  }
  return findings;
}

/** One line for a run's reason and a person: what was found, never the secret. */
export function describeFindings(findings: readonly DeliveryFinding[]): string {
  const secrets = findings.filter((f) => f.kind === 'secret');
  const config = findings.filter((f) => f.kind !== 'secret');
  const parts: string[] = [];
  if (secrets.length > 0)
    parts.push(
      `a secret (a value curupira knows, or a token or key pattern) in ${list(secrets.map((f) => `${f.path}:${f.line}`))}`,
    );
  if (config.length > 0)
    parts.push(
      `edits to agent or CI configuration the automation does not allow (\`allow_config_edits\`): ${list(config.map((f) => f.path))}`,
    );
  return parts.join('; ');
}

function list(items: readonly string[]): string {
  const shown = items.slice(0, 8).join(', ');
  return items.length > 8 ? `${shown} and ${items.length - 8} more` : shown;
}

/** The reason a held delivery's run carries. */
export function heldReason(findings: readonly DeliveryFinding[], branch: string): string {
  return `needs human: the delivery was held, nothing was pushed: the agent's commits carry ${describeFindings(findings)}; the branch ${branch} is kept in its worktree for a person to look at`;
}

/** The review as a failure message when git itself fails (a delivery that cannot be checked is held). */
export function reviewFailure(error: unknown): string {
  return `needs human: the delivery was held: its commits could not be checked for secrets and configuration edits: ${errorMessage(error)}`;
}

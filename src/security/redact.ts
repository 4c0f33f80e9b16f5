/**
 * Secrets never leak: the one place that decides what a secret looks like and replaces it with
 * `[redacted]`. Two ways, both always on:
 *
 * - by value: every value registered with `registerSecret` (the GitHub token, and at start-up the
 *   value of every variable of curupira's environment whose name looks secret, `registerSecretEnv`),
 *   as written and as it appears escaped inside a JSON string;
 * - by pattern: GitHub tokens of every prefix (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`,
 *   `github_pat_`), OpenAI and Anthropic keys (`sk-…`, `sk-proj-…`, `sk-ant-…`), AWS access keys
 *   (`AKIA…`, `ASIA…`) and the secret keys written beside them, Slack tokens (`xox[abprs]-…`),
 *   private key blocks, JWTs, `Authorization:` header values and passwords in URLs.
 *
 * Applied to log lines (`src/log.ts`), transcripts as they are written (`createLineRedactor`), run
 * records and everything else stored in the state file (`redactingStore`), and everything the CLI
 * prints. Anything curupira will post to GitHub or show on a page goes through `redact` or
 * `redactDeep` as well.
 */

export const REDACTED = '[redacted]';

/** Shorter values are not registered: replacing them would mangle ordinary text. */
export const MIN_SECRET_LENGTH = 8;

// --- secret-looking variable names ----------------------------------------------------------

/**
 * A variable holds a secret when its name contains TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
 * CREDENTIAL or APIKEY, or has KEY, AUTH, PASS, PAT or COOKIE as one of its `_`-separated words
 * (`OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `ANTHROPIC_AUTH_TOKEN`, `DB_PASS`), case ignored.
 * Whole words for the short ones, so that `GIT_AUTHOR_NAME` or `KEYBOARD_LAYOUT` are not secrets.
 */
const SECRET_NAME_PARTS = /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|APIKEY/i;
const SECRET_NAME_WORDS = new Set(['KEY', 'KEYS', 'AUTH', 'PASS', 'PAT', 'COOKIE']);
/** Secret-looking names that hold something else (a socket path). */
const NOT_SECRET_NAMES: readonly string[] = ['SSH_AUTH_SOCK'];

/** True when the variable `name` is taken to hold a secret (see SECRET_NAME_PARTS). */
export function isSecretEnvName(name: string): boolean {
  if (NOT_SECRET_NAMES.includes(name)) return false;
  if (SECRET_NAME_PARTS.test(name)) return true;
  return name
    .toUpperCase()
    .split('_')
    .some((word) => SECRET_NAME_WORDS.has(word));
}

// --- by value ---------------------------------------------------------------------------------

const secrets = new Set<string>();
/** The registered values, longest first, so that one secret inside another cannot leave a piece. */
let ordered: string[] = [];

/**
 * Every later log line, transcript line, run record and printed line has this value replaced by
 * `[redacted]`, as written and as it appears inside a JSON string (a value with quotes,
 * backslashes or control characters is escaped in an agent's JSON output).
 */
export function registerSecret(value: string | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH) return;
  const before = secrets.size;
  secrets.add(value);
  secrets.add(JSON.stringify(value).slice(1, -1));
  if (secrets.size !== before) ordered = [...secrets].sort((a, b) => b.length - a.length);
}

/** Registers the value of every variable of `env` whose name looks secret (`isSecretEnvName`). */
export function registerSecretEnv(env: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env)) {
    if (isSecretEnvName(name)) registerSecret(value);
  }
}

// --- by pattern -------------------------------------------------------------------------------

const PRIVATE_KEY_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/g;
const PRIVATE_KEY_END = /-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/g;
/**
 * What a key's body is made of when its END is not in the text: base64 lines, their headers
 * (`Proc-Type: 4,ENCRYPTED`) and line breaks, also as escaped inside a JSON string (`\n`). Never a
 * quote or another backslash, so the block stops where a JSON string ends.
 */
const KEY_BODY = String.raw`(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\[nrt])*`;
/** A whole block, or from its BEGIN line to the end of the key's body when the END is not in it. */
const PRIVATE_KEY_BLOCK = new RegExp(
  `-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:${KEY_BODY}-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|${KEY_BODY})`,
  'g',
);
/** A line that goes on with a key's body to its end (the next lines are the key's too). */
const KEY_BODY_TO_END = new RegExp(`^${KEY_BODY}$`);

const AWS_ACCESS_KEY = /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])/g;
/** A 40-character AWS secret key shape, standing alone. */
const AWS_SECRET_SHAPE = /(?<!(?<!\\)[A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
/** How far from an access key a secret key shape is taken for its secret key. */
const AWS_NEARBY_CHARS = 200;

/**
 * Patterns replaced whole. Each starts at a fixed prefix that cannot follow its own characters, or
 * has bounded parts, so that a hostile 16 MiB line costs linear time. A letter after a backslash is
 * an escape (`\n` in JSON text), not part of a word: a token right after one is still found.
 */
const TOKEN_PATTERNS: readonly RegExp[] = [
  /(?<!(?<!\\)[A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g,
  /(?<!(?<!\\)[A-Za-z0-9_])github_pat_[A-Za-z0-9_]{20,}/g,
  /(?<!(?<!\\)[A-Za-z0-9_-])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g,
  /(?<!(?<!\\)[A-Za-z0-9-])xox[abprs]-[A-Za-z0-9-]{10,}/g,
  /(?<!(?<!\\)[A-Za-z0-9-])xapp-[A-Za-z0-9-]{10,}/g,
  /(?<!(?<!\\)[A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g,
];

/**
 * Patterns whose first group (a label) is kept and the rest replaced. The replaced part matches
 * only what a secret can be made of: a header's token is RFC 6750's token characters, so a
 * placeholder (`Bearer <token>`, `Bearer $TOKEN`) is left alone, and nothing replaced ever holds a
 * quote or a backslash (text that is JSON stays JSON).
 */
const LABELLED_PATTERNS: readonly RegExp[] = [
  /(authorization["']?\s*[:=]\s*["']?(?:bearer|token|basic)\s+)[A-Za-z0-9._~+/-]+=*(?![^\s"'\\,;)\]}])/gi,
  /(\b(?:aws_?)?secret_?access_?key["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40}/gi,
  /(\b[a-z][a-z0-9+.-]{0,31}:\/\/[^/\s:@]{1,256}:)[^/\s@<>"'\\{}]{1,256}(?=@)/gi,
];

/** Secret key shapes near an AWS access key. */
function redactAwsSecretsNear(text: string): string {
  const keys = [...text.matchAll(AWS_ACCESS_KEY)].map((m) => m.index);
  if (keys.length === 0) return text;
  return text.replace(AWS_SECRET_SHAPE, (match, offset: number) =>
    nearestDistance(keys, offset) <= AWS_NEARBY_CHARS ? REDACTED : match,
  );
}

/** Distance from `at` to the nearest of `sorted` (ascending, not empty). */
function nearestDistance(sorted: readonly number[], at: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid]! < at) low = mid + 1;
    else high = mid;
  }
  const after = Math.abs(sorted[low]! - at);
  return low > 0 ? Math.min(after, Math.abs(sorted[low - 1]! - at)) : after;
}

/**
 * What every pattern above needs somewhere in the text (its fixed prefix or label, or the `://user:`
 * of a URL with a password), case ignored, so a superset of them: a text with none of these cannot
 * match any pattern, and one test of this spares it the dozen scans of `redactPatterns` (most strings
 * redacted are ids, dates, paths and plain words). A pattern added above adds its prefix here
 * (redact.test.ts checks each pattern's shortest match).
 */
export const PATTERN_TRIGGER =
  /gh[pousr]_|github_pat_|sk-|xox[abprs]-|xapp-|eyJ|A[KSB]IA|ACCA|PRIVATE KEY|authorization|secret_?access_?key|:\/\/[^/\s:@]{1,256}:/i;

function redactPatterns(text: string): string {
  if (!PATTERN_TRIGGER.test(text)) return text;
  let out = text.includes('PRIVATE KEY') ? text.replace(PRIVATE_KEY_BLOCK, REDACTED) : text;
  out = redactAwsSecretsNear(out).replace(AWS_ACCESS_KEY, REDACTED);
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, REDACTED);
  for (const pattern of LABELLED_PATTERNS)
    out = out.replace(pattern, (_match, label: string) => `${label}${REDACTED}`);
  return out;
}

/** `text` with every registered value and every known secret shape replaced by `[redacted]`. */
export function redact(text: string): string {
  let out = text;
  for (const secret of ordered) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return redactPatterns(out);
}

/** Removes credentials from text that may quote a remote URL (`https://user:token@host`), then redacts it. */
export function scrub(text: string): string {
  return redact(text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@<>"'\\{}]+@/gi, '$1[redacted]@'));
}

/**
 * `value` as JSON with its strings redacted before it is serialized: redacting the serialized text
 * instead could cut an escape in two (`\"` → `[redacted]"`) or miss a token after one (`\nghp_…`).
 */
export function redactedJson(value: unknown, space?: number): string {
  return JSON.stringify(redactDeep(value), null, space);
}

/**
 * `value` with every string in it redacted: strings, arrays and plain objects are copied, other
 * values (numbers, dates, buffers, class instances) kept as they are.
 */
export function redactDeep<T>(value: T): T {
  return deep(value) as T;
}

function deep(value: unknown): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map(deep);
  if (value === null || typeof value !== 'object') return value;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) out[key] = deep(entry);
  return out;
}

/**
 * Redacts a stream line by line, remembering a private key block across lines: from a BEGIN line
 * to its END line, every line is replaced.
 */
export function createLineRedactor(): (line: string) => string {
  let insideKey = false;
  return (line) => {
    // No BEGIN or END on this line and none open: the line alone (two scans fewer a line).
    if (!insideKey && !line.includes('PRIVATE KEY')) return redact(line);
    let text = line;
    let prefix = '';
    if (insideKey) {
      const end = lastMatch(text, PRIVATE_KEY_END);
      if (end === undefined) return REDACTED;
      insideKey = false;
      prefix = REDACTED;
      text = text.slice(end);
    }
    const begin = lastMatch(text, PRIVATE_KEY_BEGIN);
    const end = lastMatch(text, PRIVATE_KEY_END);
    // The next lines are the key's only when this one goes on with its body to the end (a key
    // inside a JSON string of one line ends with that string).
    if (begin !== undefined && (end === undefined || end < begin) && KEY_BODY_TO_END.test(text.slice(begin)))
      insideKey = true;
    return prefix + redact(text);
  };
}

/** Where the last match of `pattern` in `text` ends, if there is one. */
function lastMatch(text: string, pattern: RegExp): number | undefined {
  let found: number | undefined;
  for (const match of text.matchAll(pattern)) found = match.index + match[0].length;
  return found;
}

/**
 * Shapes shared by the deterministic screening scanners, the scan driver and the policy.
 * Nothing in src/screening/ performs I/O: text in, findings and a verdict out.
 */

export type Severity = 'low' | 'medium' | 'high' | 'critical';

/** Severities from least to most serious. */
export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const satisfies readonly Severity[];

/** One field of an item to screen: `title`, `body`, `author`, `comment[3]`, `head_branch`… */
export interface ScreenField {
  name: string;
  text: string;
}

export interface ScreenInput {
  fields: readonly ScreenField[];
}

/** What one scanner found in one field. */
export interface Finding {
  /** The scanner's stable id, e.g. `instruction-override`. */
  scanner: string;
  /** A stable sub-id inside the scanner, e.g. `tag-smuggling` (for tests, docs and tuning). */
  rule: string;
  severity: Severity;
  /** The `ScreenField.name` the finding is in. */
  field: string;
  /** UTF-16 offset into that field's text where the match starts. */
  offset: number;
  /** At most ~120 characters around the match, invisible characters written as `<U+200B>`. */
  excerpt: string;
}

/** What a scanner reports before the driver adds its id, the field name and the excerpt. */
export interface Hit {
  rule: string;
  severity: Severity;
  offset: number;
  /** Length of the matched text (for the excerpt). */
  length: number;
}

/** A field's text with the parts inside code (fenced blocks, inline code, `<pre>`/`<code>`) known. */
export interface TextView {
  readonly text: string;
  /** `text` with every character inside code replaced by a space (newlines kept): offsets match. */
  readonly prose: string;
  /** True when `offset` is inside code. */
  inCode(offset: number): boolean;
  /** True when the text has any code at all. */
  readonly hasCode: boolean;
}

/** A deterministic scanner: a small named unit with precompiled patterns and no state. */
export interface Scanner {
  /** Stable id, used in findings, docs and settings. */
  readonly id: string;
  /** One line for docs and `--explain`. */
  readonly summary: string;
  scan(view: TextView): Hit[];
}

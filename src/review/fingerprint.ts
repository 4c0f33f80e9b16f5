/**
 * When two reports are the same finding (issue 29: "the same issue found again is the same finding"):
 * the same file, category and title, the title compared without case, punctuation or spacing.
 * Lines are left out on purpose: code above a problem moves it without making it another one.
 */
import { createHash } from 'node:crypto';

export function normalizedTitle(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export function findingFingerprint(finding: { file: string; category: string; title: string }): string {
  const key = [
    finding.file.replace(/^\.\//, ''),
    finding.category.trim().toLowerCase(),
    normalizedTitle(finding.title),
  ];
  return createHash('sha256').update(key.join('\u0000')).digest('hex').slice(0, 32);
}

/**
 * A path a finding may name: relative to the repository's root, inside it (no `..` part, not
 * absolute), without control characters. Undefined when it is one; else what is wrong.
 */
export function findingPathProblem(file: string): string | undefined {
  if (file.trim() === '') return 'file must not be empty';
  if (file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(file))
    return 'file must be relative to the repository root';
  if (file.split(/[\\/]/).includes('..')) return 'file must stay inside the repository (no `..`)';
  if (/[\u0000-\u001f\u007f]/.test(file)) return 'file must not contain control characters';
  return undefined;
}

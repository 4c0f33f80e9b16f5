import { describe, expect, it } from 'vitest';
import { findingFingerprint, findingPathProblem } from './fingerprint.js';

describe('finding fingerprints', () => {
  const base = { file: 'src/db.ts', category: 'security', title: 'SQL built from user input' };

  it('are the same for the same file, category and title, however the title is spaced or cased', () => {
    expect(findingFingerprint({ ...base, title: '  sql BUILT from user-input. ' })).toBe(
      findingFingerprint(base),
    );
    expect(findingFingerprint({ ...base, file: './src/db.ts', category: 'Security' })).toBe(
      findingFingerprint(base),
    );
  });

  it('differ for another file, category or title', () => {
    const fp = findingFingerprint(base);
    expect(findingFingerprint({ ...base, file: 'src/api.ts' })).not.toBe(fp);
    expect(findingFingerprint({ ...base, category: 'bug' })).not.toBe(fp);
    expect(findingFingerprint({ ...base, title: 'Token logged' })).not.toBe(fp);
  });

  it('accept only paths inside the repository', () => {
    expect(findingPathProblem('src/db.ts')).toBeUndefined();
    expect(findingPathProblem('/etc/passwd')).toBe('file must be relative to the repository root');
    expect(findingPathProblem('src/../../x')).toBe('file must stay inside the repository (no `..`)');
    expect(findingPathProblem('a\nb')).toBe('file must not contain control characters');
    expect(findingPathProblem(' ')).toBe('file must not be empty');
  });
});

import { describe, expect, it } from 'vitest';
import { locateKeys } from './toml-locations.js';

const DOC = `# comment
[settings]
max_active_tasks = 2 # trailing

[settings.polling]
batch_size = 10

[automations."fix-bugs"]
labels = ["a", "b",
  "c"]
prompt = """
multi [not.a.table]
line = "not a key"
"""
inline = { x = 1, y = "z" }
dotted.key = true

[[things]]
name = "one"
[[things]]
name = 'two'
`;

describe('locateKeys', () => {
  const loc = locateKeys(DOC);

  it('finds tables and keys with 1-based line and column', () => {
    expect(loc.exact(['settings'])).toEqual({ line: 2, column: 1 });
    expect(loc.exact(['settings', 'max_active_tasks'])).toEqual({ line: 3, column: 1 });
    expect(loc.exact(['settings', 'polling', 'batch_size'])).toEqual({ line: 6, column: 1 });
    expect(loc.exact(['automations', 'fix-bugs'])).toEqual({ line: 8, column: 1 });
  });

  it('finds array elements across lines', () => {
    expect(loc.exact(['automations', 'fix-bugs', 'labels', 1])).toEqual({ line: 9, column: 16 });
    expect(loc.exact(['automations', 'fix-bugs', 'labels', 2])).toEqual({ line: 10, column: 3 });
  });

  it('skips multi-line strings and reads inline tables and dotted keys', () => {
    expect(loc.exact(['automations', 'fix-bugs', 'prompt'])).toEqual({ line: 11, column: 1 });
    expect(loc.exact(['not', 'a', 'table'])).toBeUndefined();
    expect(loc.exact(['automations', 'fix-bugs', 'inline', 'y'])).toEqual({ line: 15, column: 19 });
    expect(loc.exact(['automations', 'fix-bugs', 'dotted', 'key'])).toEqual({ line: 16, column: 1 });
  });

  it('indexes arrays of tables', () => {
    expect(loc.exact(['things', 1, 'name'])).toEqual({ line: 21, column: 1 });
  });

  it('falls back to the nearest written ancestor for a missing key', () => {
    expect(loc.find(['automations', 'fix-bugs', 'repo'])).toEqual({ line: 8, column: 1 });
    expect(loc.find(['nothing'])).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { BoundedTail, LineSplitter } from './output.js';

function split(chunks: string[], max = 1000): [string, boolean][] {
  const lines: [string, boolean][] = [];
  const splitter = new LineSplitter(max, (line, terminated) => lines.push([line, terminated]));
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return lines;
}

describe('LineSplitter', () => {
  it('joins lines spread over chunks and flushes the final partial line', () => {
    expect(split(['{"a":', '1}\n{"b"', ':2}\n', 'tail'])).toEqual([
      ['{"a":1}', true],
      ['{"b":2}', true],
      ['tail', false],
    ]);
  });

  it('keeps empty lines', () => {
    expect(split(['a\n\nb\n'])).toEqual([
      ['a', true],
      ['', true],
      ['b', true],
    ]);
  });

  it('cuts a line longer than the limit into pieces instead of holding it whole', () => {
    const lines = split(['x'.repeat(25), 'y'.repeat(5), '\n'], 10);
    expect(lines.map(([l]) => l).join('')).toBe('x'.repeat(25) + 'y'.repeat(5));
    expect(lines.every(([l]) => l.length <= 10)).toBe(true);
    expect(lines.at(-1)![1]).toBe(true);
  });
});

describe('BoundedTail', () => {
  it('keeps only the last bytes', () => {
    const tail = new BoundedTail(10);
    for (let i = 0; i < 100; i += 1) tail.append(`line ${i}\n`);
    expect(tail.toString()).toBe('e 98\nline 99\n'.slice(-10));
  });

  it('keeps everything when under the limit, across many small appends', () => {
    const tail = new BoundedTail(10_000);
    let all = '';
    for (let i = 0; i < 1000; i += 1) {
      tail.append(`${i},`);
      all += `${i},`;
    }
    expect(tail.toString()).toBe(all.slice(-10_000));
  });

  it('does not start with half a character', () => {
    const tail = new BoundedTail(5);
    tail.append('ação!');
    expect(tail.toString()).toBe('ão!');
  });
});

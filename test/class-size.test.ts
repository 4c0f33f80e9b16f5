/**
 * Issue 24: no class over 30 methods. A class that grows past that holds several responsibilities
 * (the engine and both store backends once did); split it by responsibility instead. Every class in
 * src/ is read with the TypeScript compiler and its methods counted: methods, getters and setters,
 * static or not, private (`#name`) included; the constructor and fields are not methods.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const MAX_METHODS = 30;
const src = fileURLToPath(new URL('../src', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `name methods` for each class (declaration or expression) in `text`. */
function classSizes(file: string, text: string): { name: string; methods: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: { name: string; methods: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const methods = node.members.filter(
        (member) => ts.isMethodDeclaration(member) || ts.isGetAccessor(member) || ts.isSetAccessor(member),
      ).length;
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ name: `${node.name?.text ?? '(anonymous class)'} (${file}:${line})`, methods });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('class size', () => {
  it('counts methods, getters and setters, private ones too, but not the constructor or fields', () => {
    const text = `
      export class Sample {
        readonly field = 1;
        constructor() {}
        a() {}
        #b() {}
        static c() {}
        get d() { return 1; }
        set d(value: number) {}
        async e() {}
      }
      const Other = class { f() {} };`;
    expect(classSizes('sample.ts', text)).toEqual([
      { name: 'Sample (sample.ts:2)', methods: 6 },
      { name: '(anonymous class) (sample.ts:12)', methods: 1 },
    ]);
  });

  it(`no class in src/ declares more than ${MAX_METHODS} methods`, () => {
    const sizes = sources(src).flatMap((path) => classSizes(relative(src, path), readFileSync(path, 'utf8')));
    expect(sizes.length).toBeGreaterThan(0);
    const over = sizes
      .filter(({ methods }) => methods > MAX_METHODS)
      .map(({ name, methods }) => `${name}: ${methods}`);
    expect(over).toEqual([]);
  });
});

/**
 * Issue 24: no class over 30 methods, and no function of the engine over 80 lines. A class that grows past that holds several responsibilities
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

const MAX_ENGINE_FUNCTION_LINES = 80;

/** `name lines` for each function, method or arrow with a body in `text`. */
function functionSizes(file: string, text: string): { name: string; lines: number }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isFunctionDeclaration(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) ||
        ts.isArrowFunction(node) ||
        ts.isFunctionExpression(node)) &&
      node.body
    ) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const last = source.getLineAndCharacterOfPosition(node.end).line + 1;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      found.push({ name: `${name} (${file}:${first})`, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function size in src/engine', () => {
  it('measures functions, methods and arrows from their first line to their last', () => {
    const text =
      'export function f() {\n  return 1;\n}\nclass C {\n  m() {\n    const g = () => {\n      return 2;\n    };\n  }\n}\n';
    expect(functionSizes('s.ts', text)).toEqual([
      { name: 'f (s.ts:1)', lines: 3 },
      { name: 'm (s.ts:5)', lines: 5 },
      { name: '(anonymous) (s.ts:6)', lines: 3 },
    ]);
  });

  it(`no function in src/engine/ is over ${MAX_ENGINE_FUNCTION_LINES} lines`, () => {
    const engine = join(src, 'engine');
    const sizes = sources(engine)
      .filter((path) => !path.endsWith('.test.ts'))
      .flatMap((path) => functionSizes(relative(src, path), readFileSync(path, 'utf8')));
    expect(sizes.length).toBeGreaterThan(0);
    const over = sizes
      .filter(({ lines }) => lines > MAX_ENGINE_FUNCTION_LINES)
      .map(({ name, lines }) => `${name}: ${lines} lines`);
    expect(over).toEqual([]);
  });
});

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

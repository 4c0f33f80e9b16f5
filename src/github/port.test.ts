/**
 * One GitHub port: outside src/github/ (and the simulator, which answers the paths), no file spells
 * a REST path or sends a raw REST request; every request is a named operation of rest.ts or
 * direct-writes.ts. Inside src/github/, a write method is spelt only by the client (and its
 * transport), the write queue
 * and the one direct path (docs/github-writes.md says which writes take it and why).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `file:line: text` of every line of `files` matching `pattern`. */
function hits(files: readonly string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (pattern.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [])),
  );
}

const PORT = ['src/github/', 'src/simulator/'];
const outside = () => sourceFiles(SRC).filter((f) => !PORT.some((p) => relative(ROOT, f).startsWith(p)));

/** A REST path of GitHub's API, in code or in a comment. */
const REST_PATH = /\/repos\/|['"`]\/user['"`]|['"`]\/(orgs|users|search|issues|notifications)\//;
/** The client's raw REST requests. */
const RAW_REST = /\.(rest|restResponse|conditionalGet)\s*[<(]/;
const WRITE_METHOD = /['"](POST|PATCH|PUT|DELETE)['"]/;

describe('the GitHub port', () => {
  it('no REST path is spelt outside src/github/', () => {
    expect(hits(outside(), REST_PATH)).toEqual([]);
  });

  it('no raw REST request is sent outside src/github/', () => {
    expect(hits(outside(), RAW_REST)).toEqual([]);
  });

  it('inside src/github/, only the client, the write queue and the direct writes name a write method', () => {
    const allowed = ['http-fetch.ts', 'client.ts', 'write-queue.ts', 'direct-writes.ts', 'rest.ts'].map((f) =>
      join(SRC, 'github', f),
    );
    const github = sourceFiles(join(SRC, 'github')).filter((f) => !allowed.includes(f));
    expect(hits(github, WRITE_METHOD)).toEqual([]);
    // rest.ts names them only in the method type its client wrapper passes through.
    const rest = hits([join(SRC, 'github', 'rest.ts')], WRITE_METHOD);
    expect(rest.every((line) => line.includes("'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'"))).toBe(true);
  });

  it('the checks find what they look for', () => {
    const lines = [
      "client.rest('GET', `/repos/${owner}/${name}/issues`)",
      "await github.restResponse<{ id: number }>('POST', path, body)",
      'github().conditionalGet(path, etag)',
      "client.rest('GET', '/user')",
      'const policy = await github.rest<{',
    ];
    expect(lines.filter((l) => REST_PATH.test(l))).toHaveLength(2);
    expect(lines.filter((l) => RAW_REST.test(l))).toHaveLength(5);
    expect(WRITE_METHOD.test("sendNow(client, 'PATCH', path)")).toBe(true);
  });
});

import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildAgentEnv, findExecutable, matchesEnvPattern } from './env.js';

const source: NodeJS.ProcessEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/ana',
  LANG: 'pt_BR.UTF-8',
  LC_ALL: 'pt_BR.UTF-8',
  PWD: '/home/ana/curupira',
  https_proxy: 'http://proxy:3128',
  ANTHROPIC_API_KEY: 'sk-ant-key',
  ANTHROPIC_BASE_URL: 'https://llm.internal',
  OPENAI_API_KEY: 'sk-openai',
  GH_TOKEN: 'ghp_fromthehost',
  GITHUB_TOKEN: 'ghp_fromthehost2',
  GH_ENTERPRISE_TOKEN: 'ghe-token',
  GIT_DIR: '/home/ana/curupira/.git',
  GIT_WORK_TREE: '/home/ana/curupira',
  GIT_INDEX_FILE: '/home/ana/curupira/.git/index',
  MY_TEAM_FLAG: '1',
  MY_TEAM_MODE: 'fast',
  DATABASE_URL: 'postgres://secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
};

describe('buildAgentEnv', () => {
  it('keeps the base set and the provider’s own variables, and nothing else', () => {
    const env = buildAgentEnv({ source, providerAllowlist: ['ANTHROPIC_*'], cwd: '/work/tree' });
    expect(env).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/ana',
      LANG: 'pt_BR.UTF-8',
      LC_ALL: 'pt_BR.UTF-8',
      https_proxy: 'http://proxy:3128',
      ANTHROPIC_API_KEY: 'sk-ant-key',
      ANTHROPIC_BASE_URL: 'https://llm.internal',
      PWD: '/work/tree',
    });
  });

  it('never passes GitHub tokens unless the profile asks, even when allowlisted, passed or set', () => {
    const env = buildAgentEnv({
      source,
      providerAllowlist: ['GH_*', 'GITHUB_TOKEN'],
      passEnv: ['GITHUB_*', 'GH_ENTERPRISE_TOKEN'],
      extra: { GH_TOKEN: 'ghp_typedintoconfig' },
      cwd: '/w',
    });
    expect(Object.keys(env)).not.toContain('GH_TOKEN');
    expect(Object.keys(env)).not.toContain('GITHUB_TOKEN');
    expect(Object.keys(env)).not.toContain('GH_ENTERPRISE_TOKEN');
  });

  it('sets GH_TOKEN and GITHUB_TOKEN to the given token when the profile asks', () => {
    const env = buildAgentEnv({ source, providerAllowlist: [], githubToken: 'ghs_curupira', cwd: '/w' });
    expect(env.GH_TOKEN).toBe('ghs_curupira');
    expect(env.GITHUB_TOKEN).toBe('ghs_curupira');
  });

  it('drops the git location variables even when passed through on purpose', () => {
    const env = buildAgentEnv({
      source,
      providerAllowlist: [],
      passEnv: ['GIT_*'],
      extra: { GIT_INDEX_FILE: '/elsewhere' },
      cwd: '/w',
    });
    expect(env.GIT_DIR).toBeUndefined();
    expect(env.GIT_WORK_TREE).toBeUndefined();
    expect(env.GIT_INDEX_FILE).toBeUndefined();
  });

  it('passes pass_env names and prefixes, then the profile env, then the driver’s variables', () => {
    const env = buildAgentEnv({
      source,
      providerAllowlist: [],
      passEnv: ['MY_TEAM_*', 'AWS_SECRET_ACCESS_KEY'],
      extra: { MY_TEAM_MODE: 'careful', OPENCODE_DB: '/from/profile' },
      invocationEnv: { OPENCODE_DB: '/w.opencode.db' },
      cwd: '/w',
    });
    expect(env.MY_TEAM_FLAG).toBe('1');
    expect(env.MY_TEAM_MODE).toBe('careful');
    expect(env.AWS_SECRET_ACCESS_KEY).toBe('aws-secret');
    expect(env.OPENCODE_DB).toBe('/w.opencode.db');
    expect(env.DATABASE_URL).toBeUndefined();
  });

  it('points PWD at the worktree whatever the caller’s PWD or the profile say', () => {
    const env = buildAgentEnv({ source, providerAllowlist: [], extra: { PWD: '/nope' }, cwd: '/w/tree' });
    expect(env.PWD).toBe('/w/tree');
  });
});

describe('matchesEnvPattern', () => {
  it('matches exact names and prefixes ending in *', () => {
    expect(matchesEnvPattern('CLAUDE_CODE_USE_BEDROCK', ['CLAUDE_*'])).toBe(true);
    expect(matchesEnvPattern('CLAUDE', ['CLAUDE_*'])).toBe(false);
    expect(matchesEnvPattern('TERM', ['TERM'])).toBe(true);
    expect(matchesEnvPattern('TERMINAL', ['TERM'])).toBe(false);
  });
});

describe('findExecutable', () => {
  const root = mkdtempSync(join(tmpdir(), 'curupira-findexe-'));
  const bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'claude'), '#!/bin/sh\n');
  chmodSync(join(bin, 'claude'), 0o755);
  writeFileSync(join(bin, 'notes'), 'not a program');
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('looks the name up on the PATH it is given, not on ours', () => {
    expect(findExecutable('claude', `/nonexistent:${bin}`)).toBe(join(bin, 'claude'));
    expect(findExecutable('claude', '/usr/bin')).toBeUndefined();
  });

  it('ignores files that are not executable and empty or relative PATH entries', () => {
    expect(findExecutable('notes', bin)).toBeUndefined();
    expect(findExecutable('claude', '::bin')).toBeUndefined();
  });

  it('takes a name with a slash as a path, relative to the given directory', () => {
    expect(findExecutable('./bin/claude', '', root)).toBe(join(bin, 'claude'));
    expect(findExecutable(join(bin, 'claude'), '')).toBe(join(bin, 'claude'));
    expect(findExecutable('./bin/missing', '', root)).toBeUndefined();
  });
});

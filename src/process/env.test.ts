import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDriver, loadDrivers } from '../agents/registry.js';
import { PROVIDERS } from '../agents/schemas.js';
import { redact } from '../log.js';
import {
  buildAgentEnv,
  buildToolEnv,
  findExecutable,
  GIT_ENV,
  isSecretEnvName,
  matchesEnvPattern,
} from './env.js';

beforeAll(() => loadDrivers());

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

  it('passes the git identity variables to every agent, and IS_SANDBOX only to Claude Code', () => {
    const identity = {
      GIT_AUTHOR_NAME: 'Ana Bot',
      GIT_AUTHOR_EMAIL: 'ana-bot@example.invalid',
      GIT_COMMITTER_NAME: 'Ana Bot',
      GIT_COMMITTER_EMAIL: 'ana-bot@example.invalid',
    };
    const withIdentity = { ...source, ...identity, IS_SANDBOX: '1' };
    for (const provider of PROVIDERS) {
      const env = buildAgentEnv({
        source: withIdentity,
        providerAllowlist: getDriver(provider).envAllowlist,
        cwd: '/w',
      });
      expect(env, provider).toMatchObject(identity);
      expect(env.IS_SANDBOX, provider).toBe(provider === 'claude' ? '1' : undefined);
    }
  });

  it('registers the value of every secret-looking variable it passes for redaction, whatever its origin', () => {
    const env = buildAgentEnv({
      source: {
        ...source,
        OPENAI_API_KEY: 'openai-value-0001',
        ANTHROPIC_AUTH_TOKEN: 'anthropic-auth-value-0002',
        GIT_AUTHOR_NAME: 'Ana Maria Bot',
        SSH_AUTH_SOCK: '/tmp/ssh-agent.sock',
        NOT_PASSED_SECRET: 'never-passed-value-0003',
      },
      providerAllowlist: ['ANTHROPIC_*', 'OPENAI_*', 'AWS_*'],
      passEnv: ['SSH_AUTH_SOCK', 'GIT_AUTHOR_NAME'],
      extra: { MY_DB_PASSWORD: 'profile-password-0004' },
      invocationEnv: { TOOL_KEY: 'invocation-key-0005' },
      cwd: '/w',
    });
    expect(env.OPENAI_API_KEY).toBe('openai-value-0001');
    for (const value of [
      'openai-value-0001',
      'anthropic-auth-value-0002',
      'profile-password-0004',
      'invocation-key-0005',
    ]) {
      expect(redact(`echo ${value}!`)).toBe('echo [redacted]!');
    }
    // Not secrets by name, or not passed: left as they are.
    expect(redact('Ana Maria Bot /tmp/ssh-agent.sock')).toBe('Ana Maria Bot /tmp/ssh-agent.sock');
    expect(redact('never-passed-value-0003')).toBe('never-passed-value-0003');
  });

  it('gives each provider the secrets its own CLI reads and no other secret-looking variable', () => {
    const secrets: NodeJS.ProcessEnv = {
      ANTHROPIC_API_KEY: 'anthropic-key-value',
      OPENAI_API_KEY: 'openai-key-value',
      GEMINI_API_KEY: 'gemini-key-value',
      NPM_TOKEN: 'npm-token-value',
      STRIPE_SECRET_KEY: 'stripe-secret-value',
      DB_PASSWORD: 'db-password-value',
      SENTRY_AUTH_TOKEN: 'sentry-token-value',
      GH_TOKEN: 'gh-token-value',
    };
    const reaches = (provider: (typeof PROVIDERS)[number]) =>
      Object.keys(
        buildAgentEnv({
          source: { ...source, ...secrets },
          providerAllowlist: getDriver(provider).envAllowlist,
          cwd: '/w',
        }),
      ).filter((name) => name in secrets);
    expect(reaches('claude')).toEqual(['ANTHROPIC_API_KEY']);
    expect(reaches('codex')).toEqual(['OPENAI_API_KEY']);
    expect(reaches('gemini')).toEqual(['GEMINI_API_KEY']);
    for (const provider of PROVIDERS) {
      for (const name of reaches(provider)) {
        expect(matchesEnvPattern(name, getDriver(provider).envAllowlist), `${provider} ${name}`).toBe(true);
      }
      expect(reaches(provider), provider).not.toContain('NPM_TOKEN');
      expect(reaches(provider), provider).not.toContain('STRIPE_SECRET_KEY');
      expect(reaches(provider), provider).not.toContain('DB_PASSWORD');
      expect(reaches(provider), provider).not.toContain('SENTRY_AUTH_TOKEN');
      expect(reaches(provider), provider).not.toContain('GH_TOKEN');
    }
  });

  it('points PWD at the worktree whatever the caller’s PWD or the profile say', () => {
    const env = buildAgentEnv({ source, providerAllowlist: [], extra: { PWD: '/nope' }, cwd: '/w/tree' });
    expect(env.PWD).toBe('/w/tree');
  });
});

describe('buildToolEnv', () => {
  const source = {
    PATH: '/usr/bin',
    HOME: '/home/me',
    GIT_CONFIG_GLOBAL: '/etc/gitconfig-ci',
    GIT_SSH_COMMAND: 'ssh -i key',
    GIT_DIR: '/elsewhere/.git',
    GH_TOKEN: 'ghp-canary',
    GITHUB_TOKEN: 'ghs-canary',
    ANTHROPIC_API_KEY: 'sk-ant-canary',
    SECRET_X: 'x',
  };

  it('gives git the base and its own variables, never a provider key, a token or one that redirects it', () => {
    expect(buildToolEnv({ source, allow: GIT_ENV, extra: { LC_ALL: 'C' } })).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/me',
      GIT_CONFIG_GLOBAL: '/etc/gitconfig-ci',
      GIT_SSH_COMMAND: 'ssh -i key',
      LC_ALL: 'C',
    });
  });

  it('passes a GitHub token only when the allowlist names it', () => {
    expect(buildToolEnv({ source, allow: ['GH_TOKEN'] })).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/me',
      GH_TOKEN: 'ghp-canary',
    });
  });

  it('reads the value of an allowed name only, in the order of the source, and skips unset ones', () => {
    const read: string[] = [];
    const counted = new Proxy<Record<string, string | undefined>>(
      { ...source, UNSET: undefined, LC_ALL: 'C.UTF-8' },
      {
        get(target, name) {
          if (typeof name === 'string') read.push(name);
          return target[name as string];
        },
      },
    );
    const env = buildToolEnv({ source: counted, allow: GIT_ENV });
    expect(Object.keys(env)).toEqual(['PATH', 'HOME', 'GIT_CONFIG_GLOBAL', 'GIT_SSH_COMMAND', 'LC_ALL']);
    expect(read).toEqual(['PATH', 'HOME', 'GIT_CONFIG_GLOBAL', 'GIT_SSH_COMMAND', 'GIT_DIR', 'LC_ALL']);
    // The same list again, and another one, from the compiled matchers.
    expect(buildToolEnv({ source, allow: GIT_ENV })).toEqual(
      buildToolEnv({ source: { ...source }, allow: GIT_ENV }),
    );
    expect(Object.keys(buildToolEnv({ source, allow: ['GIT_SSH*'] }))).toEqual([
      'PATH',
      'HOME',
      'GIT_SSH_COMMAND',
    ]);
  });
});

describe('isSecretEnvName', () => {
  it('takes names with a secret word for secrets, and leaves look-alikes', () => {
    for (const name of [
      'ANTHROPIC_API_KEY',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'ANTHROPIC_AUTH_TOKEN',
      'HF_TOKEN',
      'DB_PASSWORD',
      'SMTP_PASSWD',
      'DB_PASS',
      'OPENAI_APIKEY',
      'GOOGLE_APPLICATION_CREDENTIALS',
      'github_pat',
      'SESSION_COOKIE',
      'SSH_KEY_PASSPHRASE',
    ]) {
      expect(isSecretEnvName(name), name).toBe(true);
    }
    for (const name of [
      'GIT_AUTHOR_NAME',
      'SSH_AUTH_SOCK',
      'KEYBOARD_LAYOUT',
      'MONKEY_MODE',
      'PATH',
      'PWD',
      'PASSAGE',
    ]) {
      expect(isSecretEnvName(name), name).toBe(false);
    }
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

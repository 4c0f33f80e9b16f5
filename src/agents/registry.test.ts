import { describe, expect, it } from 'vitest';
import { DRIVER_FACTORIES, getDriver, listDrivers } from './registry.js';
import { PROVIDERS } from './schemas.js';

describe('agent driver registry', () => {
  it('has a driver for every provider with a profile schema, named after it', () => {
    expect(Object.keys(DRIVER_FACTORIES).sort()).toEqual([...PROVIDERS].sort());
    for (const driver of listDrivers()) expect(PROVIDERS).toContain(driver.provider);
    expect(listDrivers().map((d) => d.provider)).toEqual(PROVIDERS);
  });

  it('names the real executables', () => {
    expect(Object.fromEntries(listDrivers().map((d) => [d.provider, d.executable]))).toEqual({
      opencode: 'opencode',
      claude: 'claude',
      codex: 'codex',
      gemini: 'gemini',
      cursor: 'agent',
      copilot: 'copilot',
      kilo: 'kilo',
      pi: 'pi',
      qwen: 'qwen',
    });
  });

  it('makes a fresh driver and parser each time, so runs never share state', () => {
    expect(getDriver('claude')).not.toBe(getDriver('claude'));
    const driver = getDriver('claude');
    const a = driver.createParser();
    const b = driver.createParser();
    const line = '{"type":"system","subtype":"init","session_id":"s-1"}';
    expect(a.parseLine(line)).toEqual([{ kind: 'session', sessionId: 's-1' }]);
    expect(b.parseLine(line)).toEqual([{ kind: 'session', sessionId: 's-1' }]);
  });

  it('refuses an unknown provider with the reference message', () => {
    expect(() => getDriver('aider')).toThrow('unknown coding agent provider: aider');
  });

  it('gives only copilot a session id chosen by curupira, and only opencode a version probe', () => {
    expect(
      listDrivers()
        .filter((d) => d.assignsSessionId)
        .map((d) => d.provider),
    ).toEqual(['copilot']);
    expect(
      listDrivers()
        .filter((d) => d.versionArgs)
        .map((d) => d.provider),
    ).toEqual(['opencode']);
  });
});

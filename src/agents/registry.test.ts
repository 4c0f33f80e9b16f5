import { describe, expect, it } from 'vitest';
import { CLASSIFIER_PROVIDERS, DRIVER_MODULES, getDriver, listDrivers, loadDriver } from './registry.js';
import { PROVIDERS } from './schemas.js';

describe('agent driver registry', () => {
  it('has a driver for every provider with a profile schema, named after it', async () => {
    expect(Object.keys(DRIVER_MODULES).sort()).toEqual([...PROVIDERS].sort());
    const drivers = await listDrivers();
    for (const driver of drivers) expect(PROVIDERS).toContain(driver.provider);
    expect(drivers.map((d) => d.provider)).toEqual(PROVIDERS);
  });

  it('names the real executables', async () => {
    expect(Object.fromEntries((await listDrivers()).map((d) => [d.provider, d.executable]))).toEqual({
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

  it('makes a fresh driver and parser each time, so runs never share state', async () => {
    expect(await loadDriver('claude')).not.toBe(await loadDriver('claude'));
    expect(getDriver('claude')).not.toBe(getDriver('claude'));
    const driver = getDriver('claude');
    const a = driver.createParser();
    const b = driver.createParser();
    const line = '{"type":"system","subtype":"init","session_id":"s-1"}';
    expect(a.parseLine(line)).toEqual([{ kind: 'session', sessionId: 's-1' }]);
    expect(b.parseLine(line)).toEqual([{ kind: 'session', sessionId: 's-1' }]);
  });

  it('refuses an unknown provider with the reference message', async () => {
    expect(() => getDriver('aider')).toThrow('unknown coding agent provider: aider');
    await expect(loadDriver('aider')).rejects.toThrow('unknown coding agent provider: aider');
  });

  it('gives only copilot a session id chosen by curupira, and only opencode a version probe', async () => {
    const drivers = await listDrivers();
    expect(drivers.filter((d) => d.assignsSessionId).map((d) => d.provider)).toEqual(['copilot']);
    expect(drivers.filter((d) => d.versionArgs).map((d) => d.provider)).toEqual(['opencode']);
  });
});

describe('CLASSIFIER_PROVIDERS', () => {
  it('lists exactly the drivers with a tool-free classifier call', async () => {
    const drivers = await listDrivers();
    expect(
      drivers
        .filter((d) => d.classifierInvocation)
        .map((d) => d.provider)
        .sort(),
    ).toEqual([...CLASSIFIER_PROVIDERS].sort());
  });
});

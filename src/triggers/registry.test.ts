import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { AutomationFor, ResolvedAutomation } from '../config/types.js';
import type { CronAutomation } from './cron/schema.js';
import {
  acceptedTriggerNames,
  BUILT_IN_TRIGGERS,
  findTriggerDefinition,
  missingHooks,
  numberedItem,
  registerTrigger,
} from './registry.js';
import type { TriggerDefinition, TriggerType } from './types.js';

describe('trigger registry', () => {
  it('every built-in trigger has every hook', () => {
    for (const definition of Object.values(BUILT_IN_TRIGGERS)) {
      expect([definition.type, missingHooks(definition)]).toEqual([definition.type, []]);
    }
  });

  it('lists each built-in type under its own name', () => {
    for (const [type, definition] of Object.entries(BUILT_IN_TRIGGERS)) expect(definition.type).toBe(type);
  });

  it('reads the automation union from the registry: one line adds a built-in trigger', () => {
    expectTypeOf<TriggerType>().toEqualTypeOf<
      | 'github-issues'
      | 'github-pull-requests'
      | 'github-project-items'
      | 'github-commits'
      | 'cron'
      | 'after'
      | 'linear'
      | 'jira'
      | 'review-watch'
    >();
    expectTypeOf<ResolvedAutomation['triggerType']>().toEqualTypeOf<TriggerType>();
    expectTypeOf<AutomationFor<'cron'>['config']['schedule']>().toEqualTypeOf<CronAutomation['schedule']>();
  });

  it('names each hook a definition lacks', () => {
    const { createFeed: _feed, doctor: _doctor, ...partial } = BUILT_IN_TRIGGERS.cron;
    expect(missingHooks(partial)).toEqual(['createFeed', 'doctor.check', 'doctor.needs']);
  });

  it('refuses to register a trigger that lacks a hook, or a type that exists', () => {
    const { explain: _explain, ...noExplain } = BUILT_IN_TRIGGERS.cron;
    expect(() =>
      registerTrigger({ ...noExplain, type: 'incomplete' } as unknown as TriggerDefinition),
    ).toThrow('trigger type incomplete lacks explain');
    expect(() => registerTrigger(BUILT_IN_TRIGGERS.cron)).toThrow('trigger type cron is already registered');
  });

  it('a registered trigger is found by its names until it is removed', () => {
    const unregister = registerTrigger({ ...BUILT_IN_TRIGGERS.cron, type: 'ticks', aliases: ['x/ticks'] });
    expect(findTriggerDefinition('x/ticks')?.type).toBe('ticks');
    expect(acceptedTriggerNames()).toContain('ticks');
    unregister();
    expect(findTriggerDefinition('ticks')).toBeUndefined();
    expect(acceptedTriggerNames()).not.toContain('ticks');
  });

  it('an item is numbered on GitHub only when its trigger says its items are issues or pull requests', () => {
    const unregister = [
      registerTrigger({ ...BUILT_IN_TRIGGERS.cron, type: 'tickets', githubItem: 'issue' }),
      registerTrigger({ ...BUILT_IN_TRIGGERS.cron, type: 'reviews', githubItem: 'pull-request' }),
      registerTrigger({ ...BUILT_IN_TRIGGERS.cron, type: 'boards', githubItem: 'card' }),
    ];
    try {
      expect(numberedItem('tickets', 'acme/api', '12')).toEqual({ repo: 'acme/api', number: 12 });
      expect(numberedItem('reviews', 'acme/api', '7')).toEqual({ repo: 'acme/api', number: 7 });
      expect(numberedItem('boards', 'acme/api', '7')).toBeUndefined();
      expect(numberedItem('cron', 'nightly', '1767225600')).toBeUndefined();
      expect(numberedItem('tickets', 'acme/api', 'PVTI_x')).toBeUndefined();
      expect(numberedItem('unknown', 'acme/api', '3')).toBeUndefined();
    } finally {
      for (const remove of unregister) remove();
    }
  });
});

describe('a source outside GitHub', () => {
  it('is one folder that reaches its service through the trigger context alone: no GitHub module, no other trigger', () => {
    for (const source of ['linear', 'jira']) {
      const folder = join(import.meta.dirname, source);
      const imports = readdirSync(folder)
        .filter((name) => name.endsWith('.ts'))
        .flatMap((name) =>
          [...readFileSync(join(folder, name), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!),
        );
      expect(imports.filter((path) => /github|\.\.\/(?!\.\.\/)[a-z-]+\/(index|schema)/.test(path))).toEqual(
        [],
      );
      expect(imports.some((path) => path === '../service.js')).toBe(true);
    }
  });
});

/**
 * Who writes to GitHub through the queue, and which keys turn that on. A feature that queues writes
 * declares its keys next to the code that reads them (`declareWriter`); the engine builds the write
 * queue when any declared key is set (`writesWanted`), so no hand-kept list can forget one. With none
 * set, nothing is written (test/e2e/no-writes.test.ts); test/e2e/write-opt-in.test.ts proves each
 * declared key on its own produces its write.
 */
import type { AnyAutomation, ExecutionSettings, SharedAutomationFields } from '../config/types.js';

/** Keys of an automation's table (`[automations.<id>]`). */
export type AutomationKey = keyof SharedAutomationFields & string;
/** Keys that `[settings]` can also set, as the default of every automation. */
export type SettingsWideKey = AutomationKey & keyof ExecutionSettings;

export interface GitHubWriter {
  /** What writes, in a few words (`result comment`, `leases`). */
  readonly feature: string;
  /** Per-automation keys that turn its writes on. */
  readonly keys: readonly AutomationKey[];
  /** Keys also read from `[settings]` when the automation does not set them. */
  readonly settingsWide?: readonly SettingsWideKey[];
}

export function declareWriter(writer: GitHubWriter): GitHubWriter {
  return Object.freeze(writer);
}

/** Every key a writer declares, per-automation and settings-wide. */
export function writerKeys(writer: GitHubWriter): AutomationKey[] {
  return [...new Set([...writer.keys, ...(writer.settingsWide ?? [])])];
}

/** A key is on when set to anything but `false` (`result_comment = false` writes nothing). */
function isOn(value: unknown): boolean {
  return value !== undefined && value !== false;
}

/** Whether `writer` writes for `automation` (its own keys, else the settings-wide defaults). */
export function writerOn(
  writer: GitHubWriter,
  automation: Pick<AnyAutomation, 'config'>,
  execution?: Partial<Pick<ExecutionSettings, SettingsWideKey>>,
): boolean {
  const config = automation.config as Partial<Record<AutomationKey, unknown>>;
  const wide = new Set<string>(writer.settingsWide ?? []);
  return writerKeys(writer).some((key) => {
    const own = config[key];
    const fallback = wide.has(key) ? (execution as Record<string, unknown> | undefined)?.[key] : undefined;
    return isOn(own ?? fallback);
  });
}

/** True when any automation turns on any writer's writes. */
export function writesWanted(
  writers: readonly GitHubWriter[],
  automations: readonly Pick<AnyAutomation, 'config'>[],
  execution?: Partial<Pick<ExecutionSettings, SettingsWideKey>>,
): boolean {
  return automations.some((automation) => writers.some((w) => writerOn(w, automation, execution)));
}

/**
 * The options an agent CLI's `--help` lists, for the three parsers our CLIs use: clap
 * (`-c, --config <key=value>`), commander (`--agent <agent>`, `-r, --resume [value]`) and yargs
 * (`-m, --model   Model  [string]`). `curupira doctor` uses it to catch a profile key whose option
 * the installed CLI does not have; the fake CLIs' tests use it against recorded help texts.
 */
import type { Profile } from './schemas.js';
import type { AgentDriver } from './types.js';

export interface HelpOption {
  names: string[];
  takesValue: boolean;
  choices?: string[];
}

export function helpOptions(text: string): Map<string, HelpOption> {
  const options = new Map<string, HelpOption>();
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    const match = line.match(
      /^ {2,6}((?:-{1,2}[A-Za-z][\w-]*)(?:, -{1,2}[A-Za-z][\w-]*)*)( [<[][^>\]]+[>\]](?:\.\.\.)?)?/,
    );
    if (!match) continue;
    const names = match[1]!.split(', ');
    const yargsType = line.match(/\[(string|number|array|boolean)\]/)?.[1];
    const takesValue = match[2] !== undefined || (yargsType !== undefined && yargsType !== 'boolean');
    // clap prints `[possible values: …]` a few lines below; yargs `[choices: "a", "b"]` on the line.
    const rest = lines.slice(index + 1);
    const next = rest.findIndex((l) => /^ {2,6}-/.test(l));
    const block = [line, ...rest.slice(0, next === -1 ? rest.length : next)].join('\n');
    const clapChoices = block.match(/\[possible values: ([^\]]+)\]/)?.[1];
    const yargsChoices = line.match(/\[choices: ([^\]]+)\]/)?.[1];
    const choices = (clapChoices ?? yargsChoices)?.split(', ').map((c) => c.replace(/^"|"$/g, ''));
    const option: HelpOption = { names, takesValue, ...(choices ? { choices } : {}) };
    for (const name of names) options.set(name, option);
  }
  return options;
}

/** The long options of an argv, up to its `--`. */
function longOptions(args: readonly string[]): string[] {
  const cut = args.indexOf('--');
  return (cut === -1 ? args : args.slice(0, cut))
    .filter((a) => a.startsWith('--'))
    .map((a) => a.split('=')[0]!);
}

export interface ProfileOptions {
  /** The words before the first option (`exec` for codex, `run` for opencode): whose `--help` to read. */
  subcommand: string[];
  /** Long options the profile's own keys add to the driver's base invocation. */
  fromProfile: string[];
}

/** What a profile adds to its driver's invocation of a new session (no resume). */
export function profileOptions(driver: AgentDriver, profile: Profile, worktree: string): ProfileOptions {
  const build = (p: Profile) =>
    driver.buildInvocation({ profile: p, prompt: 'curupira doctor', worktree }).args;
  const full = build(profile);
  const bare = new Set(longOptions(build({ provider: profile.provider } as Profile)));
  const first = full.findIndex((a) => a.startsWith('-'));
  return {
    subcommand: full.slice(0, first === -1 ? 0 : first),
    fromProfile: [...new Set(longOptions(full).filter((o) => !bare.has(o)))],
  };
}

/**
 * Small pieces every driver uses: the provider check, JSON line reading, session-id dedup, and
 * text helpers for turning tool payloads into display strings.
 */
import { CurupiraError } from '../core/errors.js';
import type { Profile, Provider } from './schemas.js';
import type {
  AgentDriver,
  AgentEvent,
  AgentInvocation,
  AgentStreamParser,
  BuildInvocationInput,
} from './types.js';

/**
 * Model API keys and endpoints read by the multi-provider CLIs (OpenCode, Kilo, pi): each passes
 * only when curupira has it, so a user's key reaches the agent exactly as in their shell.
 */
export const COMMON_MODEL_ENV: readonly string[] = [
  'ANTHROPIC_*',
  'OPENAI_*',
  'AZURE_*',
  'OPENROUTER_*',
  'GEMINI_*',
  'GOOGLE_*',
  'VERTEX_*',
  'CLOUD_ML_REGION',
  'AWS_*',
  'GROQ_*',
  'MISTRAL_*',
  'DEEPSEEK_*',
  'XAI_*',
  'CEREBRAS_*',
  'TOGETHER_*',
  'FIREWORKS_*',
  'ZAI_*',
  'ZHIPU_*',
  'MOONSHOT_*',
  'HF_TOKEN',
  'HUGGINGFACE_*',
  'OLLAMA_*',
];

/** Throws the reference's error when a profile of another provider reaches a driver. */
export function assertProvider(expected: Provider, profile: { provider: string }): void {
  if (profile.provider !== expected) {
    throw new CurupiraError('config', `${expected} adapter cannot use ${profile.provider} profile`);
  }
}

/** A driver as written in its folder: `invocation` gets the profile, checked to be this provider's. */
export type DriverSpec<P extends Profile> = Omit<
  AgentDriver<P>,
  'buildInvocation' | 'classifierInvocation'
> & {
  invocation(profile: P, input: BuildInvocationInput<P>): AgentInvocation;
  /** The no-tools, read-only, one-shot call (`AgentDriver.classifierInvocation`). */
  classifier?(profile: P, prompt: string): AgentInvocation;
};

/** The driver `spec` describes; a profile of another provider reaching it throws. */
export function defineDriver<P extends Profile>(spec: DriverSpec<P>): AgentDriver<P> {
  const { invocation, classifier, ...driver } = spec;
  return {
    ...driver,
    buildInvocation(input) {
      assertProvider(spec.provider, input.profile);
      return invocation(input.profile, input);
    },
    ...(classifier
      ? {
          classifierInvocation(profile: P, prompt: string) {
            assertProvider(spec.provider, profile);
            return classifier(profile, prompt);
          },
        }
      : {}),
  };
}

export type JsonObject = Record<string, unknown>;

/** The line as a JSON object, or undefined for anything else (banners, blank lines, arrays). */
export function parseJsonObject(line: string): JsonObject | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function obj(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A tool's input or output as display text: strings as they are, anything else as JSON. */
export function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Joins the `text` of content blocks (`[{type:'text',text}]`), or returns a plain string. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return arr(content)
    .map((block) => (isObject(block) ? (str(block.text) ?? '') : typeof block === 'string' ? block : ''))
    .filter((text) => text !== '')
    .join('\n');
}

/** Reports each distinct session id once, however many lines repeat it. */
export class SessionIds {
  readonly #seen = new Set<string>();

  /** A `session` event for `id` the first time it is seen, nothing otherwise. */
  take(id: unknown): AgentEvent[] {
    if (typeof id !== 'string' || id === '' || this.#seen.has(id)) return [];
    this.#seen.add(id);
    return [{ kind: 'session', sessionId: id }];
  }
}

/**
 * A parser of a JSON-lines stream: each line that is a JSON object goes to `handle`, after the
 * session event for the id `sessionOf` finds in it (each id reported once). Other lines (banners,
 * blank lines) make no event.
 */
export function jsonLinesParser(spec: {
  sessionOf(event: JsonObject): unknown;
  /** Adds what `event` means to `out`, which holds its session event, if any. */
  handle(event: JsonObject, out: AgentEvent[]): void;
  end?: () => AgentEvent[];
}): AgentStreamParser {
  const sessions = new SessionIds();
  return {
    parseLine(line) {
      const event = parseJsonObject(line);
      if (!event) return [];
      const out = sessions.take(spec.sessionOf(event));
      spec.handle(event, out);
      return out;
    },
    end: () => spec.end?.() ?? [],
  };
}

/** A usage event from token counts; `input` includes the cached part. */
export function usageEvent(input: number, output: number, cached: number, costUsd?: number): AgentEvent {
  return {
    kind: 'usage',
    inputTokens: input,
    outputTokens: output,
    cachedInputTokens: cached,
    ...(costUsd !== undefined && costUsd > 0 ? { costUsd } : {}),
  };
}

/**
 * The `approval` check of the CLIs whose `approval_mode` asks before each tool call unless set
 * (Gemini CLI, Qwen Code): unset, `default` and `plan` ask, which no one answers in an unattended
 * run. `editsOnly` names the CLI's own spelling of the edits-only mode, for the advice.
 */
export function approvalModeCheck<P extends { approval_mode?: string | undefined }>(
  editsOnly: string,
): (profile: P) => { key: string; advice: string } | undefined {
  return (profile) =>
    profile.approval_mode === undefined ||
    profile.approval_mode === 'default' ||
    profile.approval_mode === 'plan'
      ? {
          key: 'approval_mode',
          advice: `"yolo" (or "${editsOnly}" for edits only): otherwise every tool call waits for an approval no one gives`,
        }
      : undefined;
}

/**
 * A saved transcript as readable text: the provider's raw stream turned into normalised events by
 * its own parser, then printed as a conversation. Works for every provider.
 */
import { readFileSync } from 'node:fs';
import { getDriver } from './registry.js';
import type { AgentEvent } from './types.js';

export function transcriptEvents(provider: string, text: string): AgentEvent[] {
  const parser = getDriver(provider).createParser();
  const events: AgentEvent[] = [];
  for (const line of text.split('\n')) {
    if (line.trim()) events.push(...parser.parseLine(line));
  }
  events.push(...parser.end());
  return events;
}

function clip(text: string, max: number): string {
  const flat = text.trim();
  return flat.length > max ? `${flat.slice(0, max)}… (${flat.length - max} more characters)` : flat;
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line, i) => (i === 0 ? line : `${prefix}${line}`))
    .join('\n');
}

export interface RenderOptions {
  /** Longest tool input/output shown (default 400 characters). */
  maxToolText?: number;
}

export function renderEvents(events: readonly AgentEvent[], options: RenderOptions = {}): string[] {
  const max = options.maxToolText ?? 400;
  const lines: string[] = [];
  for (const event of events) {
    switch (event.kind) {
      case 'session':
        lines.push(`[session ${event.sessionId}]`);
        break;
      case 'assistant':
        lines.push(`assistant: ${indent(event.text.trim(), '           ')}`);
        break;
      case 'thinking':
        lines.push(`thinking:  ${indent(clip(event.text, max), '           ')}`);
        break;
      case 'tool_call':
        lines.push(`tool call: ${event.name} ${indent(clip(event.input, max), '           ')}`);
        break;
      case 'tool_result':
        lines.push(
          `${event.isError ? 'tool error' : 'tool result'}: ${indent(clip(event.output, max), '             ')}`,
        );
        break;
      case 'usage':
        lines.push(
          `[usage: ${event.inputTokens} input tokens (${event.cachedInputTokens} cached), ${event.outputTokens} output${
            event.costUsd === undefined ? '' : `, $${event.costUsd.toFixed(4)}`
          }]`,
        );
        break;
      case 'error':
        lines.push(`error: ${event.message}`);
        break;
      case 'done':
        lines.push(
          event.isError
            ? `[finished with an error${event.result ? `: ${clip(event.result, max)}` : ''}]`
            : '[finished]',
        );
        break;
    }
  }
  return lines;
}

export function renderTranscriptFile(provider: string, path: string, options: RenderOptions = {}): string[] {
  return renderEvents(transcriptEvents(provider, readFileSync(path, 'utf8')), options);
}

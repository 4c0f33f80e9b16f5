#!/usr/bin/env node
/**
 * A deterministic STAND-IN for a classifier, for the benchmark only. It is NOT Prompt Guard and
 * says nothing about how a real model would score: it is a handful of generic keyword rules,
 * written without reading the corpus's attack templates (only the two social-engineering examples
 * quoted in bench/README.md had been seen), so that the benchmark can exercise the
 * `classifier_command` protocol end to end (spawn, JSON on stdin, scores on stdout) and show how a
 * second opinion changes the blocked shares.
 *
 * Protocol: reads {"texts": [...]} on stdin, prints {"scores": [...]}, one number in [0, 1] per text.
 *
 * Rules (each adds to a base of 0.05; the score is capped at 0.99):
 *   - addressed to an AI (AI, assistant, bot, agent, LLM, model, Copilot, Claude): +0.25
 *   - an override or bypass verb next to a rule word (ignore / skip / bypass … instructions / review /
 *     tests / checks / CI / safety): +0.45
 *   - a claim of authority (as the owner / maintainer, I authorise, approved by, on behalf of): +0.45
 *   - secrecy (don't tell / mention / inform): +0.3
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ADDRESSED = /\b(?:AI|assistant|bot|agent|LLM|model|copilot|claude)\b/i;
const OVERRIDE =
  /\b(?:ignore|disregard|forget|override|bypass|skip|disable|circumvent)\b[^.\n]{0,60}\b(?:instructions?|rules?|guidelines?|review|reviews|tests?|checks?|CI|safety|restrictions?|policy|policies)\b/i;
const AUTHORITY =
  /\b(?:as (?:the|a|your) (?:owner|maintainer|admin|administrator|lead)|i (?:authori[sz]e|approve)|(?:already )?approved by|on behalf of|with my permission)\b/i;
const SECRECY = /\b(?:don't|do not|never) (?:tell|mention|inform|notify)\b/i;

export function score(text) {
  let value = 0.05;
  if (ADDRESSED.test(text)) value += 0.25;
  if (OVERRIDE.test(text)) value += 0.45;
  if (AUTHORITY.test(text)) value += 0.45;
  if (SECRECY.test(text)) value += 0.3;
  return Math.min(0.99, Number(value.toFixed(2)));
}

if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  let input = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) input += chunk;
  const { texts } = JSON.parse(input);
  process.stdout.write(`${JSON.stringify({ scores: texts.map(score) })}\n`);
}

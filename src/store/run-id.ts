/**
 * Run ids that sort by creation: `r_` + 10 base32 digits of milliseconds + 8 base32 digits of a
 * sequence that starts at a random value each millisecond. Within one generator the ids strictly
 * increase even when several are made in the same millisecond or the clock steps backwards.
 */
import { randomInt } from 'node:crypto';

/** Crockford's base32: no I, L, O, U; ascending in ASCII, so string order is numeric order. */
const DIGITS = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_DIGITS = 10;
const SEQUENCE_DIGITS = 8;
/** Fresh sequences start below half the range so increments never overflow in practice. */
const SEQUENCE_START_LIMIT = 2 ** 39;
const SEQUENCE_MAX = 2 ** 40 - 1;
const RUN_ID = /^r_([0-9A-HJKMNP-TV-Z]{10})([0-9A-HJKMNP-TV-Z]{8})$/;

function encode(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = DIGITS[rest % 32] + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

function decode(text: string): number {
  let value = 0;
  for (const char of text) value = value * 32 + DIGITS.indexOf(char);
  return value;
}

export function isRunId(id: string): boolean {
  return RUN_ID.test(id);
}

export interface RunIdGenerator {
  next(): string;
}

/**
 * `after`: the largest id already stored, so that ids made after a restart (even with a clock that
 * moved backwards) still sort after every existing one.
 */
export function createRunIdGenerator(now: () => number, after?: string): RunIdGenerator {
  let lastTime = -1;
  let lastSequence = 0;
  const match = after ? RUN_ID.exec(after) : null;
  if (match) {
    lastTime = decode(match[1]!);
    lastSequence = decode(match[2]!);
  }

  return {
    next() {
      const time = Math.max(0, Math.floor(now()));
      if (time > lastTime) {
        lastTime = time;
        lastSequence = randomInt(SEQUENCE_START_LIMIT);
      } else if (lastSequence < SEQUENCE_MAX) {
        lastSequence += 1;
      } else {
        lastTime += 1;
        lastSequence = 0;
      }
      return `r_${encode(lastTime, TIME_DIGITS)}${encode(lastSequence, SEQUENCE_DIGITS)}`;
    },
  };
}

import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactingStream } from './io.js';

const TOKEN = 'ghs_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

describe('redactingStream', () => {
  it('redacts what is written, as text or bytes, and keeps the stream’s own properties', async () => {
    const target = Object.assign(new PassThrough(), { isTTY: true, columns: 99 });
    const stream = redactingStream(target);
    stream.write(`token ${TOKEN}\n`);
    stream.write(Buffer.from(`bytes ${TOKEN}\n`));
    stream.end();
    const chunks: Buffer[] = [];
    for await (const chunk of target) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString('utf8')).toBe('token [redacted]\nbytes [redacted]\n');
    expect(stream.isTTY).toBe(true);
    expect(stream.columns).toBe(99);
  });
});

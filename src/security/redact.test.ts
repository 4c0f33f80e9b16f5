import { describe, expect, it } from 'vitest';
import {
  createLineRedactor,
  PATTERN_TRIGGER,
  REDACTED,
  redact,
  redactDeep,
  redactedJson,
  registerSecret,
  registerSecretEnv,
} from './redact.js';

const A36 = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

describe('redact by pattern', () => {
  it.each([
    ['ghp', `ghp_${A36}`],
    ['gho', `gho_${A36}`],
    ['ghu', `ghu_${A36}`],
    ['ghs', `ghs_${A36}`],
    ['ghr', `ghr_${A36}`],
    ['github_pat', `github_pat_11ABCDEFG0_${A36}${A36}`],
    ['OpenAI', `sk-${A36}${A36}`],
    ['OpenAI project', `sk-proj-${A36}_${A36}`],
    ['Anthropic', `sk-ant-api03-${A36}-${A36}AA`],
    ['AWS access key', 'AKIAIOSFODNN7EXAMPLE'],
    ['AWS session key', 'ASIAY34FZKBOKMUTVV7A'],
    ['Slack bot', 'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx'],
    ['Slack user', 'xoxp-123456789012-123456789012-123456789012-abcdef0123456789'],
    ['Slack app', 'xoxa-2-123456789012-abcdefABCDEF'],
    ['JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
  ])('replaces a %s token wherever it stands', (_kind, token) => {
    for (const text of [token, `token=${token}`, `"key":"${token}"`, `(${token}).`]) {
      const out = redact(text);
      expect(out).not.toContain(token);
      expect(out).toContain(REDACTED);
    }
  });

  it('replaces an AWS secret key beside its access key, and after its label', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const out = redact(`aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = ${secret}\n`);
    expect(out).not.toContain(secret);
    expect(out).not.toContain('AKIAIOSFODNN7EXAMPLE');
    expect(redact(`export AWS_SECRET_ACCESS_KEY="${secret}"`)).toBe(
      `export AWS_SECRET_ACCESS_KEY="${REDACTED}"`,
    );
    // Before the access key counts too; the same shape far from any access key is left alone.
    expect(redact(`${secret} AKIAIOSFODNN7EXAMPLE`)).toBe(`${REDACTED} ${REDACTED}`);
    const far = `AKIAIOSFODNN7EXAMPLE${' '.repeat(300)}${secret}`;
    expect(redact(far)).toBe(`${REDACTED}${' '.repeat(300)}${secret}`);
  });

  it('replaces a whole private key block, and a block cut before its end', () => {
    const block = [
      '-----BEGIN OPENSSH PRIVATE KEY-----',
      'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
      '-----END OPENSSH PRIVATE KEY-----',
    ].join('\n');
    expect(redact(`key:\n${block}\ndone`)).toBe(`key:\n${REDACTED}\ndone`);
    expect(redact(JSON.stringify({ out: block }))).toBe(`{"out":"${REDACTED}"}`);
    expect(redact('-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA')).toBe(REDACTED);
  });

  it('keeps the label of an Authorization header and the user of a URL, not the secret', () => {
    expect(redact('Authorization: Bearer abc.def-123')).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(redact('"authorization": "token abcdef123456"')).toBe(`"authorization": "token ${REDACTED}"`);
    expect(redact('clone https://bot:hunter2hunter2@github.example/acme/api.git')).toBe(
      `clone https://bot:${REDACTED}@github.example/acme/api.git`,
    );
  });

  it('leaves placeholders alone and never cuts a JSON escape in two', () => {
    for (const text of [
      'curl -H "Authorization: Bearer <token>" https://api.example',
      'Authorization: Bearer $GITHUB_TOKEN',
      'Authorization: token ${{ secrets.GITHUB_TOKEN }}',
      'https://user:<password>@host.example',
    ])
      expect(redact(text)).toBe(text);
    const texts = [
      'curl -H "Authorization: Bearer <token>" and "Authorization: Bearer abc.def-123"',
      'Authorization: Bearer abcdef123456\\',
      'clone https://bot:hunt"er2@host.example',
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" }, "next": "still here',
      'key\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"',
    ];
    for (const text of texts) {
      const serialized = JSON.stringify({ text, list: [text] });
      expect(() => JSON.parse(redact(serialized))).not.toThrow();
      expect(redact(serialized)).not.toMatch(
        /abc\.def-123|abcdef123456|MIIEpAIBAAKCAQEA|b3BlbnNzaC1rZXktdjEAAAAA/,
      );
    }
    expect(redact(JSON.stringify({ text: `line\nghp_${'a'.repeat(36)}` }))).toBe(
      `{"text":"line\\n${REDACTED}"}`,
    );
    expect(JSON.parse(redactedJson({ text: texts[0] })).text).toBe(
      `curl -H "Authorization: Bearer <token>" and "Authorization: Bearer ${REDACTED}"`,
    );
  });

  it('leaves ordinary text alone: hashes, words, URLs, public keys, short look-alikes', () => {
    const benign = [
      'commit 3f2a9c1e5b2d7f3a9c1e5b2d7f3a9c1e5b2d7f3a',
      'git@github.com:acme/api.git and ssh://git@host/repo',
      'the task-management skeleton was risk-assessed',
      'sk-short and ghp_short and xoxb-1',
      '-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----',
      'https://github.com/acme/api/pull/12#issuecomment-1',
      'eyJ alone is not a token',
    ];
    for (const text of benign) expect(redact(text)).toBe(text);
  });

  it('finds its trigger in every text a pattern matches, whatever the case of a labelled one', () => {
    // The trigger only spares the scans of texts it does not match: each pattern's shortest
    // prefix or label must be in it, or that pattern would stop redacting.
    const matched = [
      ...['ghp', 'gho', 'ghu', 'ghs', 'ghr'].map((p) => `x ${p}_${A36}`),
      `github_pat_${A36}`,
      `sk-${A36}`,
      'xoxa-1234567890',
      'xoxr-1234567890',
      'xapp-1-A0123456789',
      'eyJhbGciOiJI.eyJzdWIiOiIx.sig',
      'AKIAIOSFODNN7EXAMPLE',
      'ASIAY34FZKBOKMUTVV7A',
      'ABIAY34FZKBOKMUTVV7A',
      'ACCAY34FZKBOKMUTVV7A',
      '-----BEGIN EC PRIVATE KEY-----',
      'AUTHORIZATION: Basic dXNlcjpwYXNz',
      'Authorization=token abcdef',
      'SECRETACCESSKEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'Secret_Access_Key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      'a://b:c@d',
      'SVN+SSH://user:pw@host',
      'https://x-access-token:abc@github.com/o/r',
    ];
    for (const text of matched) {
      expect(PATTERN_TRIGGER.test(text), text).toBe(true);
      expect(redact(text), text).toContain(REDACTED);
    }
  });

  it('hands back a text without any trigger as it was', () => {
    for (const text of [
      'running',
      '2026-12-05T23:55:00.123Z',
      '/tmp/x/repo.worktrees/a/issue-1',
      'Fix it.\n',
      'See https://github.com/acme/api/issues/1 and git@github.com:acme/api.git',
    ]) {
      expect(PATTERN_TRIGGER.test(text), text).toBe(false);
      expect(redact(text)).toBe(text);
    }
  });
});

describe('redact by value', () => {
  it('replaces a registered value as written and as escaped inside a JSON string', () => {
    const value = 'canary-"quoted"\\value-9d1e4f7a';
    registerSecret(value);
    expect(redact(`v=${value}`)).toBe(`v=${REDACTED}`);
    expect(redact(JSON.stringify({ v: value }))).toBe(`{"v":"${REDACTED}"}`);
  });

  it('registers the values of secret-looking variables only, at least 8 characters long', () => {
    registerSecretEnv({
      MY_SERVICE_TOKEN: 'canary-token-1b6e0c2a',
      DB_PASSWORD: 'canary-pass-5f1a7c3d',
      SHORT_KEY: 'tiny',
      EDITOR_THEME: 'canary-not-secret-8c2e',
    });
    expect(redact('canary-token-1b6e0c2a canary-pass-5f1a7c3d tiny canary-not-secret-8c2e')).toBe(
      `${REDACTED} ${REDACTED} tiny canary-not-secret-8c2e`,
    );
  });
});

describe('redactDeep', () => {
  it('redacts strings at any depth and keeps other values and class instances as they are', () => {
    const when = new Date(0);
    const input = { reason: `token ghp_${A36}`, list: [`sk-${A36}`, 3], nested: { at: when, ok: true } };
    const out = redactDeep(input);
    expect(out).toEqual({ reason: `token ${REDACTED}`, list: [REDACTED, 3], nested: { at: when, ok: true } });
    expect(out.nested.at).toBe(when);
    expect(input.reason).toContain('ghp_');
  });
});

describe('createLineRedactor', () => {
  it('redacts every line of a private key printed over several lines, and what follows its end', () => {
    const redactLine = createLineRedactor();
    const lines = [
      'here is the key:',
      '-----BEGIN EC PRIVATE KEY-----',
      'MHcCAQEEIIBfakefakefakefakefakefakefakefakefakefakeoAoGCCqGSM49',
      'AwEHoUQDQgAEfakefakefakefakefakefakefakefakefakefakefakefakefake',
      '-----END EC PRIVATE KEY----- and then',
      'an ordinary line',
    ];
    expect(lines.map(redactLine)).toEqual([
      'here is the key:',
      REDACTED,
      REDACTED,
      REDACTED,
      `${REDACTED} and then`,
      'an ordinary line',
    ]);
  });

  it('a key inside a JSON line ends with that line: the next lines are kept', () => {
    const redactLine = createLineRedactor();
    const first = JSON.stringify({ text: '-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n' });
    expect(JSON.parse(redactLine(first))).toEqual({ text: REDACTED });
    expect(redactLine('{"type":"result"}')).toBe('{"type":"result"}');
  });
});

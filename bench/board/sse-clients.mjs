/**
 * N board clients in their own process (as browsers would be), for bench/board/sse.mjs:
 *
 *   node bench/board/sse-clients.mjs URL TOKEN N
 *
 * Each client does what an open board plus an open run page do: it holds `GET /api/v1/events`
 * and, on every `change`, fetches `/board/live` (as board.js does; one fetch in flight at a time);
 * and, like a user who opens a running card, it follows the first running run on that page
 * (`GET /api/v1/runs/ID/events`) until that run ends, then the next one. Prints `ready` once every board stream is open, and its
 * counts as one JSON line when sent SIGTERM.
 */
const [url, token, countText] = process.argv.slice(2);
const headers = { authorization: `Bearer ${token}` };
const counts = { changes: 0, liveFetches: 0, runStreams: 0, agentEvents: 0, errors: 0 };
const stop = new AbortController();

/** Reads one SSE response, calling onEvent(name) per event; resolves when the stream ends. */
async function readSse(path, onEvent, onOpen) {
  const response = await fetch(`${url}${path}`, { headers, signal: stop.signal });
  if (response.status !== 200) throw new Error(`${path}: ${response.status}`);
  onOpen?.();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop() ?? '';
    for (const block of blocks) {
      const line = block.split('\n').find((l) => l.startsWith('event:'));
      onEvent(line ? line.slice(6).trim() : 'message');
    }
  }
}

function client(opened) {
  let busy = false;
  let dirty = false;
  let following;
  const follow = (page) => {
    const id = /data-run="(r_[^"]+)" data-status="running"/.exec(page)?.[1];
    if (following || !id) return;
    following = id;
    counts.runStreams += 1;
    readSse(`api/v1/runs/${encodeURIComponent(id)}/events`, (name) => {
      if (name === 'agent') counts.agentEvents += 1;
    })
      .catch(() => {
        if (!stop.signal.aborted) counts.errors += 1;
      })
      .finally(() => {
        following = undefined;
      });
  };
  const refresh = async () => {
    if (busy) {
      dirty = true;
      return;
    }
    busy = true;
    try {
      do {
        dirty = false;
        const page = await (await fetch(`${url}board/live`, { headers, signal: stop.signal })).text();
        counts.liveFetches += 1;
        follow(page);
      } while (dirty);
    } catch {
      if (!stop.signal.aborted) counts.errors += 1;
    } finally {
      busy = false;
    }
  };
  readSse(
    'api/v1/events',
    (name) => {
      if (name !== 'change') return;
      counts.changes += 1;
      void refresh();
    },
    opened,
  ).catch(() => {
    if (!stop.signal.aborted) counts.errors += 1;
  });
}

const n = Number(countText);
let open = 0;
for (let i = 0; i < n; i += 1)
  client(() => {
    open += 1;
    if (open === n) process.stdout.write('ready\n');
  });

process.on('SIGTERM', () => {
  stop.abort();
  process.stdout.write(`${JSON.stringify(counts)}\n`);
  process.exit(0);
});

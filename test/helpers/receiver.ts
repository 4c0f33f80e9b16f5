/**
 * A local HTTP receiver for notification tests: records every request (headers and raw body) and
 * answers 500 to the first `failFirst` requests, then 200 (or what `status` says).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  requests: Received[];
  /** Requests answered 2xx. */
  accepted(): Received[];
  /** Answer 500 to the next `n` requests. */
  failNext(n: number): void;
  /** Every later request is answered with this status. */
  answerWith(status: number): void;
  close(): Promise<void>;
}

export async function startReceiver(options: { failFirst?: number } = {}): Promise<Receiver> {
  let failing = options.failFirst ?? 0;
  let status = 200;
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = failing > 0 ? 500 : status;
      if (failing > 0) failing -= 1;
      requests.push({
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        status: answer,
      });
      res.writeHead(answer, { 'content-type': 'text/plain' });
      res.end(answer < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    accepted: () => requests.filter((r) => r.status >= 200 && r.status < 300),
    failNext(n) {
      failing = n;
    },
    answerWith(next) {
      status = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

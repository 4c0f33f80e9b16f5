/**
 * The GitHub simulator of the dispatch benches (bench/dispatch.mjs `simulatorWith`) in a worker
 * thread, so that answering the engine's GitHub queries does not run on the engine's thread: against
 * real GitHub that work runs on another machine, and the bare steps the engine is compared with
 * make no GitHub calls at all.
 *
 * One worker serves a whole bench process (workerData `{ simUrl }`, the compiled simulator module's
 * URL), so its code stays as warm from one drain to the next as the in-process simulator's did.
 * Messages `{ id, start: { token, tasks, skip } }` start a simulator over a new world and answer
 * `{ id, key, url }`; `{ id, close: key }` closes one and answers `{ id }`; a failure answers
 * `{ id, error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';

/**
 * Repository `acme/api` with user `octocat` (who owns `token`), label `agent-ready`, `skip` issues no
 * automation matches, then `tasks` issues labelled `agent-ready`.
 */
export function benchWorld(sim, { token, tasks, skip }) {
  const world = new sim.SimWorld();
  world.addRepo('acme/api');
  world.addUser('octocat');
  world.addToken(token, 'octocat');
  world.addLabel('acme/api', 'agent-ready');
  // Issues no automation matches, so the next drain's issues get numbers an earlier drain of the
  // same state file has not run (a finished item is not run twice).
  for (let i = 0; i < skip; i += 1) world.addIssue('acme/api', { title: `Earlier ${i}`, author: 'octocat' });
  for (let i = 0; i < tasks; i += 1)
    world.addIssue('acme/api', { title: `Task ${i}`, labels: ['agent-ready'], author: 'octocat' });
  return world;
}

if (parentPort && workerData?.simUrl) {
  const port = parentPort;
  const sim = await import(workerData.simUrl);
  const servers = new Map();
  let keys = 0;
  port.on('message', async ({ id, start, close }) => {
    try {
      if (start) {
        const server = await sim.startSimulator({ world: benchWorld(sim, start) });
        keys += 1;
        servers.set(keys, server);
        port.postMessage({ id, key: keys, url: server.url });
      } else {
        await servers.get(close)?.close();
        servers.delete(close);
        port.postMessage({ id });
      }
    } catch (error) {
      port.postMessage({ id, error: String(error?.stack ?? error) });
    }
  });
}

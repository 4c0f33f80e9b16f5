import type { FleetView } from '../fleet/types.js';
import type { Store } from '../store/types.js';
import type { EngineView } from './board-data.js';
import type { Hub } from './hub.js';

/** What every route reads: the store, the engine's view and controls, the change hub, the token. */
export interface ServerContext {
  store: Store;
  engine: EngineView;
  hub: Hub;
  token: string;
  version: string;
  /** Epoch ms the daemon started. */
  startedAt: number;
  /** The GitHub webhook secret (`github_webhook_secret_env`); unset: `/webhooks/github` is 404. */
  webhookSecret?: string;
  /**
   * The fleet's hosts and dispatches (issue 17), on a PostgreSQL state (`state_db_url`); unset on
   * the embedded store: `/api/v1/fleet` and `/fleet` are 404 and no page shows anything of a fleet.
   */
  fleet?: FleetView;
}

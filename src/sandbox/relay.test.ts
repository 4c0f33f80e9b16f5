/**
 * A sandboxed run's declaration: each CLI that curupira declares servers to is given the relay
 * (the Node.js binary the sandbox binds, the script and socket in the run's folder as the sandbox
 * sees it, the run id), in its own way, and nothing that names curupira's settings or command.
 */
import { describe, expect, it } from 'vitest';
import { loadDriver } from '../agents/registry.js';
import { PROFILE_SCHEMAS, type Provider } from '../agents/schemas.js';
import { INSIDE_RUN_DIR } from './bubblewrap/index.js';
import { toolsRelay } from './index.js';

const RUN = '0123456789abcdef';

describe('the relay declared to a sandboxed agent', () => {
  it('is the bound Node.js binary running the run folder’s script on its socket, for this run', () => {
    expect(toolsRelay(RUN)).toEqual({
      command: process.execPath,
      args: [`${INSIDE_RUN_DIR}/mcp-relay.cjs`, `${INSIDE_RUN_DIR}/tools.sock`, RUN],
    });
  });

  it.each<Provider>(['claude', 'codex', 'qwen', 'copilot', 'opencode'])(
    '%s: declared in the way the CLI loads servers',
    async (provider) => {
      const driver = await loadDriver(provider);
      expect(driver.declaresMcpServers).toBe(true);
      const invocation = driver.buildInvocation({
        profile: PROFILE_SCHEMAS[provider].parse({ provider }) as never,
        prompt: 'Review',
        worktree: '/w/tree',
        assignedSessionId: '6f1c2d3e-0000-4000-8000-000000000001',
        mcpServers: [{ name: 'curupira-findings', ...toolsRelay(RUN), env: {} }],
        env: {},
      });
      const declared = JSON.stringify([invocation.args, invocation.env]);
      for (const part of [
        process.execPath,
        `${INSIDE_RUN_DIR}/mcp-relay.cjs`,
        `${INSIDE_RUN_DIR}/tools.sock`,
        RUN,
      ])
        expect(declared).toContain(part);
      expect(declared).not.toContain('"mcp"');
      expect(declared).not.toContain('settings.toml');
    },
  );
});

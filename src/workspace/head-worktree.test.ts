import { describe, expect, it } from 'vitest';
import { remoteRepoName } from './head-worktree.js';

describe('remoteRepoName', () => {
  it('reads owner/name from https, ssh and scp-like remotes', () => {
    expect(remoteRepoName('https://github.com/acme/api.git')).toBe('acme/api');
    expect(remoteRepoName('https://github.example.com/acme/api')).toBe('acme/api');
    expect(remoteRepoName('ssh://git@github.com/acme/api.git')).toBe('acme/api');
    expect(remoteRepoName('git@github.com:acme/api.git')).toBe('acme/api');
    expect(remoteRepoName('https://github.com/evil/fork.git/')).toBe('evil/fork');
  });

  it('names no repository for a local path or a file URL', () => {
    expect(remoteRepoName('/tmp/x/origin.git')).toBeUndefined();
    expect(remoteRepoName('file:///tmp/x/origin.git')).toBeUndefined();
    expect(remoteRepoName('https://github.com/acme')).toBeUndefined();
  });
});

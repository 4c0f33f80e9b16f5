import { writeFileSync } from 'node:fs';
import { boardPage } from '../dist/server/pages.js';
import { BOARD_CSS } from '../dist/server/assets.js';
const now = new Date().toISOString();
const run = { id: 'r_1', automationId: 'fix', repo: 'acme/api', itemId: '1', itemKey: 'issue:1', taskKey: 'k1', taskType: 'github-issues', itemTitle: 'Slow first', itemUrl: 'https://github.com/acme/api/issues/1', status: 'running', createdAt: now, startedAt: now, finishedAt: null, reason: null, profile: 'claude', provider: 'claude', commits: 0, worktreeKept: false };
const data = {
  now, summary: '1 running · 2 queued', attentionCount: 0, automations: [], inProgress: [run], attention: [], attentionGroups: [], done: [],
  engine: { mode: 'watch', running: [], queued: 2, maxActive: 1, stopping: false, draining: false, waiting: 0,
    queuedTasks: [
      { automationId: 'fix', repo: 'acme/api', itemId: '2', item: 'acme/api#2', title: 'Waits <b>second</b>', url: 'https://github.com/acme/api/issues/2' },
      { automationId: 'fix', repo: 'acme/api', itemId: '3', item: 'acme/api#3', title: 'Third in line', url: 'https://github.com/acme/api/issues/3' },
    ] },
};
let page = String(boardPage(data, 'tok', undefined).text ?? boardPage(data, 'tok', undefined));
page = page.replace(/<link[^>]*board\.css[^>]*>/, `<style>${BOARD_CSS}</style>`).replace(/<script[^>]*><\/script>/g, '');
writeFileSync('/tmp/queued.html', page);
console.log(page.length);

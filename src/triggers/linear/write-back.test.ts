import { describe, expect, it } from 'vitest';
import type { RunRecord, Task } from '../../core/types.js';
import { linearTrigger } from './index.js';
import { LinearAutomation, type LinearResolved } from './schema.js';
import { commentId, linearWriteBack } from './write-back.js';

function automation(table: Record<string, unknown>): LinearResolved {
  const config = LinearAutomation.parse({ repository: 'api', prompt: 'x', team: 'ENG', ...table });
  return { id: 'lin', config, triggerType: 'linear', trigger: linearTrigger } as unknown as LinearResolved;
}

const task = { item: { id: 'ENG-7' } } as unknown as Task;
const run = (status: string) => ({ id: 'r1', status }) as unknown as RunRecord;

describe('Linear write-back', () => {
  it('is wanted only with result_comment or result_state, and writes nothing without them', () => {
    const none = automation({});
    expect(linearWriteBack.wanted(none)).toBe(false);
    expect(linearWriteBack.writes(none, task, run('succeeded'), 'text')).toEqual([]);
    expect(linearWriteBack.wanted(automation({ result_comment: true }))).toBe(true);
    expect(linearWriteBack.wanted(automation({ result_state: 'In Review' }))).toBe(true);
  });

  it('queues the comment after every run and the move after a success only, on one queue item', () => {
    const a = automation({ result_comment: true, result_state: 'In Review' });
    const ok = linearWriteBack.writes(a, task, run('succeeded'), 'done');
    expect(ok.map((w) => [w.repo, w.number, w.marker, w.write])).toEqual([
      [
        'linear:ENG',
        7,
        'linear-result run=r1',
        {
          kind: 'service',
          service: 'linear',
          automation: 'lin',
          item: 'ENG-7',
          action: 'comment',
          body: 'done',
        },
      ],
      [
        'linear:ENG',
        7,
        'linear-state run=r1',
        {
          kind: 'service',
          service: 'linear',
          automation: 'lin',
          item: 'ENG-7',
          action: 'move',
          state: 'In Review',
        },
      ],
    ]);
    const failed = linearWriteBack.writes(a, task, run('failed'), 'failed');
    expect(failed.map((w) => w.marker)).toEqual(['linear-result run=r1']);
  });

  it('derives one UUID per write: the same marker, the same id', () => {
    const id = commentId('lin', 'linear-result run=r1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(commentId('lin', 'linear-result run=r1')).toBe(id);
    expect(commentId('lin', 'linear-result run=r2')).not.toBe(id);
    expect(commentId('other', 'linear-result run=r1')).not.toBe(id);
  });
});

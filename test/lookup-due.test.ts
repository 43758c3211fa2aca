import { describe, expect, it } from 'vitest';
import { openStudio } from '../main/studio.ts';
import { sqlOf } from './helpers/sql.ts';
import { tempDir } from './helpers/tmp.ts';

describe('which unknown outcomes the engine looks up by itself', () => {
  it('only those whose request id is not known: a request parked at the poll deadline is the person\'s to decide', async () => {
    const dir = tempDir();
    const studio = await openStudio(dir);
    try {
      const project = await studio.projects.ensure('Film', 1);
      const unnamed = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: 'fal-ai/flux/dev', input: { prompt: 'a' } }, 1);
      const named = await studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: 'fal-ai/flux/dev', input: { prompt: 'b' } }, 1);
      const db = sqlOf(dir);
      db.prepare(`UPDATE tasks SET status = 'OUTCOME_UNKNOWN', charged = 'maybe', submit_started_at = 1, finished_at = 1 WHERE id IN (?, ?)`).run(unnamed.id, named.id);
      db.prepare(`UPDATE tasks SET remote_request_id = 'fal-req-9' WHERE id = ?`).run(named.id);
      expect((await studio.tasks.dueForLookup(['fal'], 10, 0, 10_000, 8)).map((d) => d.task.id)).toEqual([unnamed.id]);
    } finally {
      await studio.close();
    }
  });
});

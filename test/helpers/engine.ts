import { join } from 'node:path';
import { openDatabase, type Db } from '../../main/db/database.ts';
import { OwnerRegistry } from '../../main/engine/owners.ts';
import type { Clock } from '../../main/ports.ts';
import { ProjectRepository } from '../../main/projects/repository.ts';
import type { NewTask } from '../../main/tasks/model.ts';
import { TaskRepository } from '../../main/tasks/repository.ts';

/** A clock the test moves by hand; sleep resolves at once after moving time forward. */
export class ManualClock implements Clock {
  constructor(
    public wall = 1_750_000_000_000,
    public mono = 1_000,
  ) {}
  now = () => this.wall;
  monotonic = () => this.mono;
  advance(ms: number): void {
    this.wall += ms;
    this.mono += ms;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    this.advance(ms);
    await Promise.resolve();
  }
}

/** A real SQLite file with the app's pragmas and migrations. */
export function openTestDb(dir: string) {
  const db: Db = openDatabase(join(dir, 'studio.db'));
  const project = new ProjectRepository(db).ensure('Test project', 0);
  return { db, repo: new TaskRepository(db), owners: new OwnerRegistry(db), projectId: project.id };
}

export function imageTask(projectId: number, prompt = 'a red fox', extra: Partial<NewTask> = {}): NewTask {
  return { projectId, kind: 'image', provider: 'fake', model: 'fake-image', input: { prompt }, ...extra };
}

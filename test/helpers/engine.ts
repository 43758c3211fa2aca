import { databasePath } from '../../main/config/paths.ts';
import type { Clock } from '../../main/domain/ports.ts';
import { openSqliteStore } from '../../main/store/sqlite/store.ts';
import type { NewTask } from '../../main/domain/tasks/model.ts';

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

/** The studio's SQLite store on a real file in `dir`, with the app's pragmas and migrations. */
export async function openTestStore(dir: string) {
  const store = openSqliteStore(databasePath(dir));
  const project = await store.projects.ensure('Test project', 0);
  return { store, repo: store.tasks, owners: store.owners, projectId: project.id };
}

export type TestStore = Awaited<ReturnType<typeof openTestStore>>;

export function imageTask(projectId: number, prompt = 'a red fox', extra: Partial<NewTask> = {}): NewTask {
  return { projectId, kind: 'image', provider: 'fake', model: 'fake-image', input: { prompt }, ...extra };
}

import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SavedJob } from './server.ts';

/** The simulator's accepted jobs as JSON lines; the last line for an id wins. */
export class JobStore {
  private readonly file: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, 'jobs.jsonl');
  }

  load(): SavedJob[] {
    if (!existsSync(this.file)) return [];
    const byId = new Map<string, SavedJob>();
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const job = JSON.parse(line) as SavedJob;
        byId.set(job.id, job);
      } catch {
        // A line cut short by a crash is the only damage an append can suffer; the rest stands.
      }
    }
    return [...byId.values()];
  }

  save(job: SavedJob): void {
    const { id, kind, model, input, createdAt, durationMs, charge, fault, cancelled } = job;
    appendFileSync(this.file, `${JSON.stringify({ id, kind, model, input, createdAt, durationMs, charge, fault, cancelled })}\n`);
  }
}

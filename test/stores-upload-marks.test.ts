import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { uploadedInput } from '../main/engine/inputUploads.ts';
import { UPLOAD_FAILED_DETAIL, uploadFailures } from '../main/engine/uploadRetry.ts';
import type { ProviderAdapter } from '../main/providers/port.ts';
import { imageTask } from './helpers/engine.ts';
import { storeKinds } from './helpers/stores.ts';
import { tempDir } from './helpers/tmp.ts';

const LEASE = 60_000;
const as = (owner: string) => ({ owner, now: Date.now() });

/** A provider that takes files by URL; a lookup never uploads, so this one must never be asked. */
const byUrl = { id: 'fal', upload: () => Promise.reject(new Error('a lookup uploaded a file')) } as unknown as ProviderAdapter & Required<Pick<ProviderAdapter, 'upload'>>;

describe.each(storeKinds())('the $kind store: the uploads of an attempt', ({ available, open }) => {
  it.skipIf(!available)("the boundary mark keeps the attempt's uploads, and a lookup of that attempt takes them, not a note written after", async () => {
    const store = await open();
    const { id: projectId } = await store.projects.ensure('Fox', 1);
    const start = join(tempDir(), 'start.png');
    writeFileSync(start, 'the start image');
    const sha256 = createHash('sha256').update('the start image').digest('hex');
    const { id } = await store.tasks.enqueue({ ...imageTask(projectId), kind: 'clip', provider: 'fal' }, Date.now());

    // Two upload failures on the way, counted from the history: nothing was marked for them.
    for (let i = 0; i < 2; i++) {
      await store.tasks.claim('clip', 1, LEASE, as('w'));
      await store.tasks.requeue(id, 0, 'could not put start.png in fal storage', as('w'), UPLOAD_FAILED_DETAIL);
    }
    expect(uploadFailures(await store.tasks.events(id))).toBe(2);

    await store.tasks.claim('clip', 1, LEASE, as('w'));
    const sent = { provider: 'fal', sha256, url: 'https://cdn.example/attempt-1/start.png' };
    const mark = await store.tasks.markSubmitStarted(id, 'studio-task-1-attempt-1', LEASE, as('w'), [sent]);
    expect('marked' in mark).toBe(true);
    const marked = (await store.tasks.events(id)).filter((e) => e.reason === 'submit started');
    expect(marked.map((e) => e.detail)).toEqual([{ idempotencyKey: 'studio-task-1-attempt-1', uploads: [sent] }]);

    // A stalled worker's late note of another upload of the same file changes nothing the lookup rebuilds.
    await store.tasks.note(id, 'uploaded start.png', { upload: { provider: 'fal', sha256, url: 'https://cdn.example/stray/start.png' } }, Date.now());
    const task = (await store.tasks.get(id))!;
    const inline = await uploadedInput(task, byUrl, { repo: store.tasks });
    expect(await inline(start)).toBe(sent.url);
  });
});

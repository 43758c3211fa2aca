import { describe, expect, it } from 'vitest';
import { apiForTest } from './helpers/studioApi.ts';
import { freshDatabase, postgresAvailable, queryRows } from './helpers/postgres.ts';
import { runStudio, writeSettings } from './helpers/processes.ts';
import { tempDir } from './helpers/tmp.ts';
import { startResponsesStandIn } from './fakes/openaiResponses.ts';

/** Two drafts of one idea at once (the app and the CLI, two CLIs, two machines of a team): true words, one charge. */

const IDEA = 'An owl wakes at dusk. It glides over a frozen lake. It lands on a pine as the moon rises.';
const board = (prompt: string) => ({ width: 320, height: 180, scenes: [{ id: 'dusk', imagePrompt: prompt, duration: 1 }] });

describe('the loser of a draft race', () => {
  it('is told the storyboard holds that very draft already, and revision 0 is read as "no storyboard yet"', async () => {
    const call = await apiForTest(tempDir());
    await call('createProject', 'Owl');
    expect(await call('draftStoryboard', 'Owl', { idea: IDEA, scenes: 3, revision: 0 })).toMatchObject({ status: 200, result: { revision: 1, already: false } });
    // The same draft, begun before the first was saved (revision 0): it is there already.
    expect(await call('draftStoryboard', 'Owl', { idea: IDEA, scenes: 3, revision: 0 })).toMatchObject({ status: 200, result: { taskId: 1, revision: 1, already: true } });

    // Another idea begun as the first storyboard, finished after someone saved one.
    expect(await call('saveStoryboard', 'Owl', { ...board('an owl, edited'), revision: 1 })).toMatchObject({ status: 200, result: 2 });
    const stale = await call('draftStoryboard', 'Owl', { idea: `${IDEA} It sleeps.`, scenes: 3, revision: 0 });
    expect(stale.status).toBe(409);
    expect(stale.error).toMatch(/^a storyboard of "Owl" was saved \(revision 2\) while task 2 drafted the project's first one, so it was not overwritten; the draft is kept/);
    expect(stale.error).not.toMatch(/does not say which revision/);
  }, 60_000);
});

describe.skipIf(!postgresAvailable)('a team drafting on PostgreSQL', () => {
  it('a draft made on one machine is put on the storyboard from another, with its own media folder, at no charge', async () => {
    const url = await freshDatabase();
    const fake = await startResponsesStandIn('good');
    const machine = (name: string) => {
      const dataDir = tempDir();
      writeSettings(dataDir, { providers: { openai: { key: 'sk-test', baseUrl: fake.url } }, engine: { poll: { intervalMs: 100, maxIntervalMs: 200 } } });
      // No shared media folder: each machine keeps its files in its own.
      return { dataDir, env: { STUDIO_DATABASE_URL: url, STUDIO_MACHINE_NAME: name, STUDIO_MEDIA_DIR: tempDir() } };
    };
    const a = machine('a');
    const b = machine('b');
    const made = await runStudio(a.dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai'], a.env);
    expect(made.code, made.stderr).toBe(0);

    const other = await runStudio(b.dataDir, ['draft', 'Fox', IDEA, '--scenes', '3', '--with', 'openai', '--replace'], b.env);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toMatch(/nothing: reused: task 1 drafted this idea already/);
    expect(other.stdout).toMatch(/storyboard drafted from task 1 with 3 scene\(s\), revision 2/);
    expect(fake.charged).toHaveLength(1);
    expect(await queryRows(url, `SELECT revision::int AS revision FROM storyboards`)).toEqual([{ revision: 2 }]);
  }, 90_000);
});

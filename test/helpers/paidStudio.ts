import { isAbsolute, join } from 'node:path';
import { openStudio } from '../../main/studio.ts';
import type { NewTask } from '../../main/domain/tasks/model.ts';
import { FAL_MODEL, type Ledger } from '../fakes/providers.ts';
import { startFake, type Route } from '../fakes/server.ts';
import { writeSettings } from './processes.ts';
import type { StoreKind } from './stores.ts';
import { tempDir } from './tmp.ts';

/** Fast polls and a lease long enough that only a stop or a kill the test makes takes it away. */
export const ENGINE = { leaseMs: 60_000, tickMs: 100, poll: { intervalMs: 100, maxIntervalMs: 200, deadlineMs: 60_000 } };

/** The team database each data folder of a test on PostgreSQL points at. */
const databases = new Map<string, string>();

/**
 * A data folder whose studio buys from one provider stand-in (fal, OpenAI and ElevenLabs all pointed at it), on the
 * store `kind`; `env` is what a studio process needs to reach both.
 */
export async function paidStudio(route: (ledger: Ledger) => Route, kind: StoreKind) {
  const ledger: Ledger = { charged: [] };
  const fake = await startFake(route(ledger));
  const dataDir = tempDir();
  writeSettings(dataDir, { engine: ENGINE });
  if (kind.kind === 'postgres') databases.set(dataDir, await kind.fresh());
  const team: Record<string, string> = kind.kind === 'postgres' ? { STUDIO_DATABASE_URL: databases.get(dataDir)!, STUDIO_MACHINE_NAME: 'machine-a' } : {};
  const env = {
    ...team,
    STUDIO_FAL_BASE_URL: fake.url,
    FAL_KEY: 'fal-key-0123456789',
    STUDIO_OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: 'sk-test-0123456789',
    STUDIO_ELEVENLABS_BASE_URL: fake.url,
    ELEVENLABS_API_KEY: 'el-key-0123456789',
  };
  return { ledger, fake, dataDir, env };
}

export const studioAt = (dataDir: string) => openStudio(dataDir, undefined, { database: databases.get(dataDir) });

/** Where a saved file is: a row keeps its path relative to the machine's folder. */
export const fileIn = (dataDir: string, path: string) => (isAbsolute(path) ? path : join(dataDir, path));

export async function enqueueIn(dataDir: string, task: Omit<NewTask, 'projectId'>, project: string): Promise<number> {
  const studio = await studioAt(dataDir);
  try {
    const { id } = await studio.projects.ensure(project, Date.now());
    return (await studio.tasks.enqueue({ ...task, projectId: id }, Date.now())).id;
  } finally {
    await studio.close();
  }
}

/** A task as its data folder keeps it: the row, its history and its saved files. */
export async function readTask(dataDir: string, id: number) {
  const studio = await studioAt(dataDir);
  try {
    return { task: (await studio.tasks.get(id))!, events: await studio.tasks.events(id), outputs: await studio.tasks.outputs(id) };
  } finally {
    await studio.close();
  }
}

export const falImage = (input: Record<string, unknown> = {}) => ({ kind: 'image' as const, provider: 'fal', model: FAL_MODEL, input: { prompt: 'a fox', ...input } });
export const openAiImage = { kind: 'image' as const, provider: 'openai', model: 'gpt-image-1', input: { prompt: 'a fox' } };
export const elevenSpeech = { kind: 'speech' as const, provider: 'elevenlabs', model: 'eleven_multilingual_v2', input: { text: 'hello there', voice_id: 'voice-1' } };

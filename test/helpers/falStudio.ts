import { makeMedia, type Media } from '../../main/simulator/media.ts';
import { openStudio } from '../../main/studio.ts';
import { falStandIn, type FalStandInOptions } from '../fakes/falStandIn.ts';
import { realMedia, type Ledger } from '../fakes/providers.ts';
import { startFake } from '../fakes/server.ts';
import { writeSettings } from './processes.ts';
import { tempDir } from './tmp.ts';

export const FAL_KEY = 'fal-key-0123456789';

export type FalMedia = { png: Media; clip: Media };

/** What fal's stand-in answers with: a real PNG and a real one-second MP4. */
export async function falMedia(): Promise<FalMedia> {
  return { png: (await realMedia()).png, clip: await makeMedia('clip', { prompt: 'push in', duration: 1 }) };
}

/**
 * fal's stand-in on 127.0.0.1 and a studio data folder that sends to it, with one project: short leases, polls
 * and lookups, so a lost answer is looked up within a second.
 */
export async function falStudio(media: FalMedia, standIn: FalStandInOptions, engine: { image: number; clip: number; lookupTries: number }) {
  const ledger: Ledger = { charged: [] };
  const fal = falStandIn(ledger, media, standIn);
  const fake = await startFake(fal.route);
  const dataDir = tempDir();
  writeSettings(dataDir, {
    engine: {
      leaseMs: 3_000,
      tickMs: 50,
      concurrency: { image: engine.image, clip: engine.clip, speech: 0, render: 0 },
      poll: { intervalMs: 100, maxIntervalMs: 300, deadlineMs: 20_000 },
      lookup: { intervalMs: 300, tries: engine.lookupTries },
    },
  });
  const studio = await openStudio(dataDir);
  const project = await studio.projects.ensure('Fox', Date.now());
  return { ledger, fal, fake, dataDir, studio, projectId: project.id, env: { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY } };
}

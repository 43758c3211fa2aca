import { makeMedia, type Media } from '../../main/simulator/media.ts';
import { openStudio, type Studio } from '../../main/studio.ts';
import { falStandIn, FLUX, KLING, type FalStandInOptions } from '../fakes/falStandIn.ts';
import { realMedia, type Ledger } from '../fakes/providers.ts';
import { startFake, type SeenRequest } from '../fakes/server.ts';
import { writeSettings } from './processes.ts';
import { tempDir } from './tmp.ts';

export const FAL_KEY = 'fal-key-0123456789';

export type FalMedia = { png: Media; clip: Media };

/** What fal's stand-in answers with: a real PNG and a real one-second MP4. */
export async function falMedia(): Promise<FalMedia> {
  return { png: (await realMedia()).png, clip: await makeMedia('clip', { prompt: 'push in', duration: 1 }) };
}

export interface FalEngine {
  image: number;
  clip: number;
  lookupTries: number;
  /** The poll deadline, 20 s unless a job runs longer. */
  deadlineMs?: number;
  /** The lookups' spacing and fal's queue allowance, where a test needs its own. */
  lookup?: { intervalMs: number; queueMs: number };
}

/**
 * fal's stand-in on 127.0.0.1 and a studio data folder that sends to it, with one project: short leases, polls
 * and lookups, so a lost answer is looked up within a second. `before` sees each request ahead of the stand-in.
 */
export async function falStudio(media: FalMedia, standIn: FalStandInOptions, engine: FalEngine, before?: (req: SeenRequest) => Promise<void>) {
  const ledger: Ledger = { charged: [] };
  const fal = falStandIn(ledger, media, standIn);
  const fake = await startFake(
    before
      ? async (req, res) => {
          await before(req);
          return fal.route(req, res);
        }
      : fal.route,
  );
  const dataDir = tempDir();
  writeSettings(dataDir, {
    engine: {
      leaseMs: 3_000,
      tickMs: 50,
      concurrency: { image: engine.image, clip: engine.clip, speech: 0, render: 0 },
      poll: { intervalMs: 100, maxIntervalMs: 300, deadlineMs: engine.deadlineMs ?? 20_000 },
      lookup: { intervalMs: 300, tries: engine.lookupTries, ...engine.lookup },
    },
  });
  const studio = await openStudio(dataDir);
  const project = await studio.projects.ensure('Fox', Date.now());
  return { ledger, fal, fake, dataDir, studio, projectId: project.id, env: { STUDIO_FAL_BASE_URL: fake.url, FAL_KEY } };
}

/** A FLUX image, and a Kling clip that starts from it. */
export async function imageThenClip(studio: Studio, projectId: number): Promise<number> {
  const image = (await studio.tasks.enqueue({ projectId, kind: 'image', provider: 'fal', model: FLUX, input: { prompt: 'a fox' } }, Date.now())).id;
  const clip = await studio.tasks.enqueue(
    { projectId, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: { $output: image }, duration: 5 }, dependsOn: [image] },
    Date.now(),
  );
  return clip.id;
}

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { falQueue, realMedia, type Ledger } from '../fakes/providers.ts';
import { replicateStandIn } from '../fakes/replicateStandIn.ts';
import { send, startFake } from '../fakes/server.ts';
import { hasChromium, serve, useBrowser } from '../helpers/browser.ts';
import { cli } from '../helpers/cli.ts';
import { writeSettings } from '../helpers/processes.ts';
import { simulatorForTest } from '../helpers/running.ts';
import { sqlOf } from '../helpers/sql.ts';
import { tempDir } from '../helpers/tmp.ts';
import { openStudio } from '../../main/studio.ts';
import { FAL_DEV_SQUARE } from '../helpers/boards.ts';

/** Where to save the screenshots a person looks at, when set. */
const SHOTS = process.env.STUDIO_SHOTS;

const browser = useBrowser();

/** The estimate as a creator sees it: FLUX.1 [dev] at fal and at Replicate with a move to the cheaper, and a forecast from past bills. */
describe.skipIf(!hasChromium)('the estimate: the same model at two providers, and a forecast', () => {
  it('shows Replicate\'s price beside fal\'s with its source, moves the scene for nothing, and shows "usually bills 20 % over"', async () => {
    const { png } = await realMedia();
    const ledger: Ledger = { charged: [] };
    const queue = falQueue(ledger, png);
    // fal's pricing endpoint at 0.05 USD a megapixel, above Replicate's 0.025 an image.
    const fal = await startFake((req, res) =>
      req.path.startsWith('/v1/models/pricing') ? send(res, 200, { prices: [{ endpoint_id: 'fal-ai/flux/dev', unit_price: 0.05, unit: 'megapixels', currency: 'USD' }] }) : queue(req, res),
    );
    const replicate = replicateStandIn(png, { predictTime: () => 1, perImage: 0.025, perSecond: 0.001525 });
    const rep = await startFake(replicate.route);
    const sim = await simulatorForTest({ jobMs: 50 });
    const dir = tempDir();
    writeSettings(dir, { providers: { simulator: { baseUrl: sim.url }, fal: { baseUrl: fal.url, key: 'fal-key-0123456789' }, replicate: { baseUrl: rep.url, key: 'r8_0123456789abcdef0123456789' } } });
    const file = join(dir, 'board.json');
    writeFileSync(file, JSON.stringify(FAL_DEV_SQUARE));
    expect((await cli(dir, 'storyboard', 'create', 'Fox', '--file', file)).code).toBe(0);
    // Five earlier runs of the simulator's clip model, each billed 1.2 times its estimate.
    expect((await cli(dir, 'storyboard', 'create', 'Earlier', '--file', file)).code).toBe(0);
    const studio = await openStudio(dir);
    const earlier = (await studio.projects.byName('Earlier'))!;
    for (let i = 0; i < 5; i++) {
      const { id } = await studio.tasks.enqueue({ projectId: earlier.id, kind: 'clip', provider: 'simulator', model: 'sim-clip-1', input: { prompt: `run ${i}` } }, Date.now());
      sqlOf(dir).prepare(`UPDATE tasks SET status = 'SUCCEEDED', charged = 'yes', cost_estimated = 100000, cost_actual = 120000 WHERE id = ?`).run(id);
    }
    await studio.close();

    const { url } = await serve(dir);
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(url);
    await page.locator('.projects').getByRole('button', { name: /^Fox/ }).click();
    const offer = page.getByTestId('offer-dawn:image-replicate');
    await expect.poll(() => offer.textContent()).toMatch(/^The same model \(FLUX\.1 \[dev\]\) at replicate: 0\.025 USD \(catalogue: 1 image at 0\.025 USD each.*\)Move dawn to replicate, about 0\.\d+ USD less in all$/);
    await expect.poll(() => page.getByTestId('forecast-dawn:clip').textContent()).toMatch(/^forecast .* USD: usually bills 20 % over \(5 billed runs\)$/);
    if (SHOTS) await page.getByTestId('estimate').screenshot({ path: join(SHOTS, 'estimate-two-providers-forecast.png') });

    await offer.getByRole('button', { name: /Move dawn to replicate/ }).click();
    await expect.poll(() => page.getByTestId('offer-dawn:image-fal').count()).toBe(1);
    if (SHOTS) await page.getByTestId('estimate').screenshot({ path: join(SHOTS, 'estimate-after-move.png') });
    expect(ledger.charged.length + replicate.bills.length).toBe(0);
  }, 90_000);
});

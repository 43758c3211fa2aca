import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KLING } from '../fakes/falStandIn.ts';
import { axe, serious } from '../helpers/axe.ts';
import { CHROMIUM, hasChromium, serve, useBrowser } from '../helpers/browser.ts';
import { falMedia, falStudio, type FalMedia } from '../helpers/falStudio.ts';
import { runStudio } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';

const SHOTS = 'test-results/screenshots';
if (!hasChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (install chromium or set CHROMIUM_PATH)`);

const browser = useBrowser();
let media: FalMedia;
beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  media = await falMedia();
}, 60_000);

/** The page is shown in Berlin's time, so a time written in UTC would not pass for local. */
const ZONE = 'Europe/Berlin';
const inZone = (at: Date, style: Intl.DateTimeFormatOptions) => new Intl.DateTimeFormat('en-GB', { timeZone: ZONE, ...style }).format(at);
/** As the page shows a time: the hour alone when it falls today in the person's zone, else with its date. */
const hourMinute = (iso: string) => {
  const at = new Date(iso);
  const today = inZone(at, { dateStyle: 'short' }) === inZone(new Date(), { dateStyle: 'short' });
  return today ? inZone(at, { hour: '2-digit', minute: '2-digit' }) : inZone(at, { dateStyle: 'medium', timeStyle: 'short' });
};

/**
 * fal lists a request once it has ended (fal.ai/docs/platform-apis/v1/models/requests/by-endpoint.md: statuses
 * success, error, user_error; sorted by end time), so while a lost request could still be running nobody can
 * see it there. The person is shown until when, in local time, and a resubmit then is chosen knowing it may pay twice.
 */
describe.skipIf(!hasChromium)('a decision on a fal request not listed yet, in Chromium', () => {
  let close: (() => Promise<void>) | undefined;
  afterAll(async () => close?.());

  it('shows until when it could still run, asks about paying twice, and resubmits it even if running once confirmed', async () => {
    // The first submit is queued and charged at fal and its answer lost; the job runs far longer than the test.
    const { ledger, dataDir, studio, projectId, env } = await falStudio(media, { jobMs: 60 * 60_000, dropAnswer: (n) => n === 1 }, { image: 0, clip: 2, lookupTries: 3 });
    close = () => studio.close();
    const id = (await studio.tasks.enqueue({ projectId, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: 'https://example.com/start.png', duration: 5 } }, Date.now())).id;
    const { host, url } = await serve(dataDir, env);
    await until(async () => (await studio.tasks.get(id))!.status === 'OUTCOME_UNKNOWN', 15_000);
    expect(ledger.charged).toEqual(['fal-req-1']);

    // What a resubmit without the choice is refused with: the time the page must show.
    const refused = await runStudio(dataDir, ['resolve', String(id), '--resubmit'], env);
    expect(refused.code).not.toBe(0);
    const listedBy = /could list it only by (\S+);/.exec(refused.stderr + refused.stdout)?.[1];
    expect(listedBy).toMatch(/^\d{4}-\d\d-\d\dT/);

    const page = await browser().newPage({ viewport: { width: 1280, height: 900 }, timezoneId: ZONE, locale: 'en-GB' });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    const task = page.getByRole('dialog', { name: 'Needs your decision' }).getByTestId(`unknown-${id}`);
    const notice = task.getByTestId('may-run-until');
    await notice.waitFor();
    expect(await notice.textContent()).toContain(`fal lists a request once it has ended; this one could still be queued or running until ${hourMinute(listedBy!)}.`);
    expect(await notice.locator('time').getAttribute('datetime')).toBe(listedBy);

    await page.screenshot({ path: `${SHOTS}/decision-not-listed-yet-task.png` });
    await notice.getByText('Why until then').click();
    expect(await notice.textContent()).toContain("twice fal's stated run of about 5 min");
    expect(serious(await axe(page))).toEqual([]);

    await task.getByRole('button', { name: 'Resubmit' }).click();
    const confirm = page.getByRole('dialog', { name: 'Send it again, although it may still be running at fal?' });
    await confirm.waitFor();
    const asked = (await confirm.textContent())!;
    expect(asked).toContain(`could still be queued or running there until ${hourMinute(listedBy!)}`);
    expect(asked).toContain('you may pay twice for this step');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.screenshot({ path: `${SHOTS}/decision-not-listed-yet-confirm.png` });
    expect(serious(await axe(page))).toEqual([]);

    await confirm.getByRole('button', { name: 'Send it again anyway' }).click();
    await task.waitFor({ state: 'detached' });
    const decided = (await studio.tasks.events(id)).filter((e) => e.actor === 'person').at(-1)!;
    expect(decided.detail).toMatchObject({ evenIfRunning: true, listedBy });
    // Sent again as chosen: the second charge at fal is the one the person accepted.
    await until(() => ledger.charged.length === 2, 15_000);
    expect(ledger.charged).toEqual(['fal-req-1', 'fal-req-2']);
    expect(errors).toEqual([]);
    host.child.kill('SIGTERM');
    await host.exited;
  }, 90_000);
});

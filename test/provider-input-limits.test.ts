import { afterEach, describe, expect, it } from 'vitest';
import type { TaskPage } from '../main/api/contract.ts';
import { launchHost, type LaunchedHost } from '../main/host/launch.ts';
import { makeMedia, type Media } from '../main/simulator/media.ts';
import { realMedia } from './fakes/providers.ts';
import { send, startFake, type FakeServer, type Route } from './fakes/server.ts';
import { writeSettings } from './helpers/processes.ts';
import { simulatedStudio } from './helpers/simulatedStudio.ts';
import { apiCaller } from './helpers/studioApi.ts';
import { tempDir } from './helpers/tmp.ts';
import { until } from './helpers/wait.ts';

/**
 * Inputs fal and OpenAI would refuse, by the limits of their own schemas: fal's OpenAPI for Kling 2.1 Standard
 * (prompt and negative_prompt at most 2500 characters, cfg_scale 0 to 1) and for FLUX.1 [schnell]
 * (num_inference_steps 1 to 12), OpenAI's CreateSpeechRequest (instructions at most 4096 characters).
 */
const KLING = 'fal-ai/kling-video/v2.1/standard/image-to-video';
const SCHNELL = 'fal-ai/flux/schnell';
const TTS = 'gpt-4o-mini-tts';

/** `n` characters as JSON Schema counts them (code points), a fox emoji among them: 2 UTF-16 units each. */
const text = (n: number) => '🦊'.repeat(10) + 'a'.repeat(n - 10);

let clipMedia: Media | undefined;

/**
 * A stand-in for fal's queue and OpenAI's speech endpoint on 127.0.0.1 that counts every request, answering as
 * fal's queue docs and OpenAI's speech reference say: a request ends at once with a real PNG or MP4; speech
 * answers the audio, named by x-request-id.
 */
async function standIn(): Promise<FakeServer> {
  const { png, speech } = await realMedia();
  clipMedia ??= await makeMedia('clip', { prompt: 'a fox', duration: 1 });
  const mp4 = clipMedia;
  let next = 0;
  const route: Route = (req, res) => {
    const host = `http://${req.headers.host}`;
    if (req.method === 'POST' && req.path === '/v1/audio/speech') return send(res, 200, speech.bytes, { 'content-type': speech.contentType, 'x-request-id': `speech-${++next}` });
    // fal's storage: an upload is initiated, then its bytes are PUT to the URL given (fal-js libs/client/src/storage.ts).
    if (req.method === 'POST' && req.path.startsWith('/storage/upload/initiate')) return send(res, 200, { upload_url: `${host}/uploads/start.png`, file_url: `${host}/files/out.png` });
    if (req.method === 'PUT' && req.path === '/uploads/start.png') return send(res, 200, {});
    if (req.method === 'POST' && req.path.startsWith('/fal-ai/')) {
      const id = `${req.path.includes('kling') ? 'clip' : 'image'}-${++next}`;
      const base = `${host}/requests/${id}`;
      return send(res, 200, { request_id: id, status: 'IN_QUEUE', status_url: `${base}/status`, response_url: base, cancel_url: `${base}/cancel` }, { 'x-fal-request-id': id });
    }
    const status = /^\/requests\/((image|clip)-\d+)\/status(\/stream)?(\?.*)?$/.exec(req.path);
    if (status?.[3]) return send(res, 404, { detail: 'Not Found' });
    if (status) return send(res, 200, { status: 'COMPLETED', request_id: status[1], logs: [], metrics: { inference_time: 1 } });
    if (/^\/requests\/image-\d+$/.test(req.path)) return send(res, 200, { images: [{ url: `${host}/files/out.png`, content_type: 'image/png' }] });
    if (/^\/requests\/clip-\d+$/.test(req.path)) return send(res, 200, { video: { url: `${host}/files/out.mp4`, content_type: 'video/mp4' } });
    if (req.path === '/files/out.png') return send(res, 200, png.bytes, { 'content-type': 'image/png' });
    if (req.path === '/files/out.mp4') return send(res, 200, mp4.bytes, { 'content-type': 'video/mp4' });
    if (req.path.startsWith('/v1/models/pricing')) return send(res, 200, { prices: [] });
  };
  return startFake(route);
}

/** The requests that buy something: a fal queue submit or an OpenAI speech request. */
const paid = (fake: FakeServer) => fake.seen.filter((r) => r.method === 'POST' && (r.path.startsWith('/fal-ai/') || r.path === '/v1/audio/speech'));

describe('the executor refuses what the provider would refuse, before the boundary mark', () => {
  it('fails each over-limit task, charged no, naming the field and the limit, and sends nothing', async () => {
    const fake = await standIn();
    const s = await simulatedStudio({
      jobMs: 50,
      settings: (url) => ({
        engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
        providers: {
          simulator: { baseUrl: url },
          fal: { key: 'fal-key-0123456789', baseUrl: fake.url },
          openai: { key: 'sk-test-0123456789', baseUrl: fake.url },
          replicate: { key: 'r8_test_0123456789', baseUrl: fake.url },
        },
      }),
    });
    const project = await s.studio.projects.ensure('Limits', Date.now());
    const clip = (input: Record<string, unknown>) => ({ kind: 'clip' as const, provider: 'fal', model: KLING, input: { prompt: 'push in', image_url: 'https://example.com/a.png', ...input } });
    // Written straight to the table, as a studio before these checks (or another machine's) could have enqueued them.
    const cases = [
      { task: clip({ prompt: text(2501) }), words: '"prompt" is too long (at most 2500 characters): it has 2501' },
      { task: clip({ negative_prompt: text(2501) }), words: '"negative_prompt" is too long (at most 2500 characters)' },
      { task: clip({ cfg_scale: 1.5 }), words: '"cfg_scale" must be a number from 0 to 1, not 1.5' },
      { task: clip({ cfg_scale: -0.1 }), words: '"cfg_scale" must be a number from 0 to 1, not -0.1' },
      { task: { kind: 'image' as const, provider: 'fal', model: SCHNELL, input: { prompt: 'a fox', num_inference_steps: 13 } }, words: '"num_inference_steps" must be a whole number from 1 to 12, not 13' },
      // A 64-bit seed in JSON text reads as the nearest number a double keeps (18446744073709552000): another seed.
      {
        task: { kind: 'image' as const, provider: 'fal', model: 'fal-ai/flux/dev', input: JSON.parse('{"prompt": "a fox", "seed": 18446744073709551615}') },
        words: '"seed" is too large to be kept exactly (it reads as 18446744073709552000); give a whole number from -9007199254740991 to 9007199254740991',
      },
      { task: { kind: 'image' as const, provider: 'fal', model: SCHNELL, input: { prompt: 'a fox', extra: { steps: [1, 2 ** 53 + 2] } } }, words: '"extra.steps[1]" is too large to be kept exactly' },
      // fal's runner downloads a file input from its URL, or takes a data: URI (fal.ai/docs/documentation/model-apis/fal-cdn).
      { task: clip({ image_url: 'file:///etc/passwd' }), words: '"image_url" must be an https or http address of the file, or a data: URI, not "file:///etc/passwd"' },
      { task: clip({ image_url: 'not a url' }), words: '"image_url" must be an https or http address of the file, or a data: URI, not "not a url"' },
      { task: { kind: 'speech' as const, provider: 'openai', model: TTS, input: { text: 'hello', instructions: text(4097) } }, words: '"instructions" is too long (at most 4096 characters): it has 4097' },
      // Replicate's published schema for its FLUX.1 [schnell] allows fewer steps than fal's.
      { task: { kind: 'image' as const, provider: 'replicate', model: 'black-forest-labs/flux-schnell', input: { prompt: 'a fox', num_inference_steps: 5 } }, words: '"num_inference_steps" must be a whole number from 1 to 4, not 5' },
    ];
    const ids = [];
    for (const c of cases) ids.push((await s.studio.tasks.enqueue({ projectId: project.id, ...c.task }, Date.now())).id);
    await s.work();
    for (const [i, c] of cases.entries()) {
      const task = (await s.studio.tasks.get(ids[i]!))!;
      expect(task).toMatchObject({ status: 'FAILED', charged: 'no', submitStartedAt: null, remoteRequestId: null });
      expect(task.error).toContain(`invalid input: ${c.words}`);
    }
    expect(fake.seen).toEqual([]);
  });

  it('refuses a clip made from another task\'s image before that image is uploaded to fal\'s storage', async () => {
    const fake = await standIn();
    const s = await simulatedStudio({
      jobMs: 50,
      settings: (url) => ({
        engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
        providers: { simulator: { baseUrl: url }, fal: { key: 'fal-key-0123456789', baseUrl: fake.url } },
      }),
    });
    const project = await s.studio.projects.ensure('Limits', Date.now());
    const image = await s.studio.tasks.enqueue({ projectId: project.id, kind: 'image', provider: 'fal', model: SCHNELL, input: { prompt: 'a fox' } }, Date.now());
    const clip = await s.studio.tasks.enqueue(
      { projectId: project.id, kind: 'clip', provider: 'fal', model: KLING, input: { prompt: 'push in', cfg_scale: 2, image_url: { $output: image.id } }, dependsOn: [image.id] },
      Date.now(),
    );
    await s.work();
    expect(await s.studio.tasks.get(image.id)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await s.studio.tasks.get(clip.id)).toMatchObject({ status: 'FAILED', charged: 'no', error: expect.stringContaining('"cfg_scale" must be a number from 0 to 1, not 2') });
    expect(paid(fake).map((r) => r.path)).toEqual([`/${SCHNELL}`]);
    expect(fake.seen.filter((r) => r.path.startsWith('/storage') || r.path.startsWith('/uploads'))).toEqual([]);
  });

  it('sends inputs at the limit, each once, as they were given', async () => {
    const fake = await standIn();
    const s = await simulatedStudio({
      jobMs: 50,
      settings: (url) => ({
        engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
        providers: { simulator: { baseUrl: url }, fal: { key: 'fal-key-0123456789', baseUrl: fake.url }, openai: { key: 'sk-test-0123456789', baseUrl: fake.url } },
      }),
    });
    const project = await s.studio.projects.ensure('Limits', Date.now());
    const inputs = [
      { kind: 'clip' as const, provider: 'fal', model: KLING, input: { prompt: text(2500), negative_prompt: text(2500), cfg_scale: 1, image_url: 'https://example.com/a.png' } },
      { kind: 'clip' as const, provider: 'fal', model: KLING, input: { prompt: 'hold', cfg_scale: 0, image_url: 'https://example.com/a.png' } },
      { kind: 'image' as const, provider: 'fal', model: SCHNELL, input: { prompt: 'a fox', num_inference_steps: 12 } },
      { kind: 'speech' as const, provider: 'openai', model: TTS, input: { text: 'hello', instructions: text(4096) } },
      { kind: 'image' as const, provider: 'fal', model: 'fal-ai/flux/dev', input: { prompt: 'a fox', seed: Number.MAX_SAFE_INTEGER } },
      { kind: 'clip' as const, provider: 'fal', model: KLING, input: { prompt: 'inline', image_url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ];
    const ids = [];
    for (const t of inputs) ids.push((await s.studio.tasks.enqueue({ projectId: project.id, ...t }, Date.now())).id);
    await s.work();
    for (const id of ids) expect(await s.studio.tasks.get(id)).toMatchObject({ status: 'SUCCEEDED' });
    const bodies = paid(fake).map((r) => JSON.parse(r.body));
    expect(bodies).toHaveLength(6);
    expect(bodies).toContainEqual(expect.objectContaining({ prompt: text(2500), negative_prompt: text(2500), cfg_scale: 1 }));
    expect(bodies).toContainEqual(expect.objectContaining({ prompt: 'hold', cfg_scale: 0 }));
    expect(bodies).toContainEqual(expect.objectContaining({ num_inference_steps: 12 }));
    expect(bodies).toContainEqual(expect.objectContaining({ model: TTS, instructions: text(4096) }));
    expect(paid(fake).find((r) => r.body.includes('"seed"'))!.body).toContain('"seed":9007199254740991');
    expect(bodies).toContainEqual(expect.objectContaining({ prompt: 'inline', image_url: 'data:image/png;base64,iVBORw0KGgo=' }));
  });
});

describe('Generate refuses what the provider would refuse, before anything is asked or saved', () => {
  let host: LaunchedHost | undefined;
  afterEach(async () => {
    await host?.stop();
    host = undefined;
  });

  async function start(fake: FakeServer) {
    const dir = tempDir();
    writeSettings(dir, {
      engine: { tickMs: 50, poll: { intervalMs: 50, maxIntervalMs: 100 } },
      providers: { fal: { key: 'fal-key-0123456789', baseUrl: fake.url }, openai: { key: 'sk-test-0123456789', baseUrl: fake.url } },
    });
    host = await launchHost(dir);
  }

  const call = apiCaller(() => host);

  /** Two scenes: the first takes the storyboard's steps, the second has a clip step of its own; a frame whose stills Kling takes (300 px a side at least). */
  function board(change: { motionPrompt?: string; clip?: Record<string, unknown>; sceneClip?: Record<string, unknown>; image?: Record<string, unknown>; speech?: Record<string, unknown> } = {}) {
    return {
      width: 640,
      height: 360,
      steps: {
        image: { provider: 'fal', model: SCHNELL, options: { num_inference_steps: 4, ...change.image } },
        clip: { provider: 'fal', model: KLING, options: { cfg_scale: 0.5, ...change.clip } },
        speech: { provider: 'openai', model: TTS, options: { voice: 'coral', ...change.speech } },
      },
      scenes: [
        { id: 'dawn', imagePrompt: 'a fox asleep in snow', motionPrompt: change.motionPrompt ?? 'push in', narration: 'At dawn, the fox wakes.', duration: 2 },
        { id: 'hunt', imagePrompt: 'the fox listening', motionPrompt: 'hold', narration: 'It listens.', duration: 2, steps: { clip: { provider: 'fal', model: KLING, options: { cfg_scale: 0.5, ...change.sceneClip } } } },
      ],
    };
  }

  it('names the field, its limit and where it was written; nothing is sent, enqueued or changed', async () => {
    const fake = await standIn();
    await start(fake);
    const cases = [
      { edit: { motionPrompt: text(2501) }, words: ['step dawn:clip', '"prompt" is too long (at most 2500 characters): it has 2501', 'change scene 1 ("dawn") motionPrompt'] },
      { edit: { clip: { negative_prompt: text(2501) } }, words: ['"negative_prompt" is too long (at most 2500 characters)', "change the storyboard's steps.clip.options.negative_prompt"] },
      { edit: { sceneClip: { cfg_scale: 1.01 } }, words: ['step hunt:clip', '"cfg_scale" must be a number from 0 to 1, not 1.01', 'change scene 2 ("hunt") steps.clip.options.cfg_scale'] },
      { edit: { image: { num_inference_steps: 13 } }, words: ['"num_inference_steps" must be a whole number from 1 to 12, not 13', "steps.image.options.num_inference_steps"] },
      // The speech steps come last: the image and clip steps before them are not quoted either.
      { edit: { speech: { instructions: text(4097) } }, words: ['"instructions" is too long (at most 4096 characters): it has 4097', "steps.speech.options.instructions"] },
    ];
    for (const c of cases) {
      const project = `Fox ${cases.indexOf(c)}`;
      await call('createProject', project);
      await call('saveStoryboard', project, board(c.edit));
      const before = (await call<unknown>('getStoryboard', project)).result;
      // A Generate with a new take of a scene would also save that take in the storyboard, had it not been refused.
      for (const args of [['estimate'], ['generate'], ['generate', ['dawn']]] as const) {
        const refused = await call(args[0], project, ...args.slice(1));
        expect(refused.status).toBe(400);
        for (const w of c.words) expect(refused.error).toContain(w);
        expect(refused.error).toContain('Nothing was enqueued.');
      }
      expect((await call<TaskPage>('listTasks', project, 0, 50)).result.total).toBe(0);
      expect((await call<unknown>('getStoryboard', project)).result).toEqual(before);
    }
    expect(fake.seen).toEqual([]);
  });

  it('estimates and generates a storyboard whose inputs are at the limits, and sends them as written', async () => {
    const fake = await standIn();
    await start(fake);
    await call('createProject', 'Fox');
    await call('saveStoryboard', 'Fox', board({ motionPrompt: text(2500), clip: { negative_prompt: text(2500), cfg_scale: 1 }, sceneClip: { cfg_scale: 0 }, image: { num_inference_steps: 12 }, speech: { instructions: text(4096) } }));
    const estimate = await call('estimate', 'Fox');
    expect(estimate.error).toBeUndefined();
    expect((await call('generate', 'Fox')).error).toBeUndefined();
    // Both images, both narrations, then both clips once their images are made.
    await until(() => paid(fake).length === 6, 20_000);
    const bodies = paid(fake).map((r) => JSON.parse(r.body));
    expect(bodies.filter((b) => b.num_inference_steps === 12)).toHaveLength(2);
    expect(bodies.filter((b) => b.instructions === text(4096))).toHaveLength(2);
    expect(bodies).toContainEqual(expect.objectContaining({ prompt: text(2500), negative_prompt: text(2500), cfg_scale: 1 }));
    expect(bodies).toContainEqual(expect.objectContaining({ prompt: 'hold', cfg_scale: 0 }));
  });
});

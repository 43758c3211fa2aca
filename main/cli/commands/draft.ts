import { applyDraft, DraftRefused, draftProvider, estimateDraft, shownAnswer, startDraft, type DraftEstimate } from '../../pipeline/draft.ts';
import { readDraftRequest } from '../../domain/storyboardDraft.ts';
import { StoryboardError } from '../../domain/storyboard.ts';
import { StaleStoryboard } from '../../domain/storyboardRevision.ts';
import { openProviders } from '../../providers/registry.ts';
import { createSupervisor, openStudio } from '../../studio.ts';
import type { Task } from '../../domain/tasks/model.ts';
import { keptAnswer } from '../../domain/tasks/keptAnswer.ts';
import { parse } from '../args.ts';
import { UsageError } from '../errors.ts';
import { engineLog } from '../cliLog.ts';
import type { CliContext } from '../context.ts';
import { money } from '../output.ts';

const USAGE = 'studio draft PROJECT "idea..." [--scenes N] [--with simulator|openai] [--estimate] [--replace] [--again] | studio draft PROJECT --show-answer TASK';
/** The draft goes on at the provider (a signal, or still queued past the poll deadline): collected by a later run. */
const DRAFT_GOES_ON = 3;
const ENDED = new Set(['SUCCEEDED', 'FAILED', 'OUTCOME_UNKNOWN', 'CANCELLED']);

function costWords(e: DraftEstimate): string {
  if (e.reuses !== null) return `nothing: ${e.source}`;
  if (e.cost === null) return `price unknown (${e.source})`;
  return `about ${money(e.cost, e.currency)}${e.simulated ? ' (simulated, never charged)' : ''}; ${e.source}`;
}

function scenesArg(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--scenes is a whole number of scenes, not "${text}"`);
  return Number(text);
}

/**
 * `draft PROJECT "idea"`: a storyboard drafted from an idea by a text model, one paid step in the task table. The
 * same idea drafted again uses the finished draft (never paid twice); the draft is saved as a storyboard revision,
 * so an edit saved meanwhile is never overwritten.
 */
export async function draft(argv: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { scenes: { type: 'string' }, with: { type: 'string' }, estimate: { type: 'boolean' }, replace: { type: 'boolean' }, again: { type: 'boolean' }, 'show-answer': { type: 'string' } },
    2,
  );
  const [name, idea] = positionals;
  if (name && values['show-answer'] !== undefined) return showAnswer(values['show-answer'], ctx);
  if (!name || idea === undefined) throw new UsageError(`name the project and give the idea: ${USAGE}`);
  const studio = await openStudio(ctx.dataDir, undefined, { database: ctx.database, media: ctx.media });
  const providers = await openProviders(studio.settings, studio.dataDir);
  try {
    const request = readDraftRequest({ idea, scenes: scenesArg(values.scenes) });
    const provider = draftProvider(values.with, studio.settings.defaults.image.provider);
    const estimate = await estimateDraft(studio, providers.get(provider)!, name, request, provider);
    ctx.out(`Draft of ${request.scenes} scene(s) with ${estimate.provider} ${estimate.model}: ${costWords(estimate)}.`);
    if (values.estimate) return 0;
    const project = await studio.projects.byName(name);
    const from = project ? await studio.storyboards.revision(project.id) : 0;
    if (from > 0 && !values.replace) {
      throw new UsageError(`project "${name}" already has a storyboard (revision ${from}); a draft replaces every scene of it, so add --replace to draft over it`);
    }
    let task = await startDraft(studio, name, request, estimate, values.again === true);
    if (!ENDED.has(task.status)) {
      ctx.out(`Drafting as task ${task.id}...`);
      const ran = await runDraft(studio, providers.get, task.id, ctx);
      if (typeof ran === 'string') {
        const sent = (await studio.tasks.get(task.id))?.remoteRequestId;
        ctx.err(
          sent
            ? `studio: ${ran}: task ${task.id} goes on at ${estimate.provider}; "studio draft" again collects it at no charge, and "studio cancel ${task.id}" stops it if it has not run yet`
            : `studio: ${ran}: task ${task.id} waits in the queue; "studio draft" again sends it (the draft is paid once), and "studio cancel ${task.id}" drops it`,
        );
        return DRAFT_GOES_ON;
      }
      task = ran;
    }
    if (task.status !== 'SUCCEEDED') {
      const why = task.status === 'OUTCOME_UNKNOWN' ? `its outcome is unknown (${task.unknownReason ?? 'no reason kept'}); decide it with "studio resolve ${task.id}"` : (task.error ?? task.status.toLowerCase());
      const answered = task.status === 'FAILED' && keptAnswer(await studio.tasks.events(task.id)) !== null;
      const kept = answered ? `; what the model answered is kept: "studio draft ${name} --show-answer ${task.id}"` : '';
      ctx.err(`studio: draft task ${task.id} did not finish: ${why}; the storyboard was left as it was${kept}`);
      return 1;
    }
    const done = await applyDraft(studio, name, task, from);
    const left = done.dropped > 0 ? ` The model wrote ${done.scenes + done.dropped} scenes where ${done.scenes} were asked for: the first ${done.scenes} are kept.` : '';
    ctx.out(
      done.already
        ? `${name}: the storyboard holds this draft already (task ${task.id}, revision ${done.revision}), put there by another run of the same draft.${left}`
        : `${name}: storyboard drafted from task ${task.id} with ${done.scenes} scene(s), revision ${done.revision}.${left} Edit it like any storyboard ("studio storyboard show ${name} --json").`,
    );
    return 0;
  } catch (err) {
    if (err instanceof StaleStoryboard) throw new UsageError(`${err.message} (run the same "studio draft" with --replace)`);
    if (err instanceof DraftRefused || err instanceof StoryboardError) throw new UsageError(err.message);
    throw err;
  } finally {
    await providers.close();
    await studio.close();
  }
}

/** `--show-answer TASK`: what the model answered, as it wrote it (stdout), and why it is no storyboard (stderr). */
async function showAnswer(id: string, ctx: CliContext): Promise<number> {
  if (!/^\d+$/.test(id)) throw new UsageError(`--show-answer takes a task number, not "${id}"`);
  const studio = await openStudio(ctx.dataDir, undefined, { database: ctx.database, media: ctx.media });
  try {
    const { text, problem } = await shownAnswer(studio, Number(id));
    ctx.out(text);
    if (problem) ctx.err(`studio: this answer is not a storyboard the studio can use: ${problem}. Fix it in a file and save it with "studio storyboard create" (or "edit"); it costs nothing`);
    return 0;
  } catch (err) {
    if (err instanceof DraftRefused) throw new UsageError(err.message);
    throw err;
  } finally {
    await studio.close();
  }
}

/**
 * Runs the engine here for drafts alone (nothing else enqueued is bought) until the draft task ends. Returns why it
 * stopped waiting instead when a signal came or the provider still had it past the poll deadline: the task goes on.
 */
async function runDraft(studio: Awaited<ReturnType<typeof openStudio>>, providers: Parameters<typeof createSupervisor>[1], id: number, ctx: CliContext): Promise<Task | string> {
  studio.settings.engine.concurrency = { image: 0, clip: 0, speech: 0, render: 0, draft: 1 };
  const { lines } = engineLog(ctx, studio, 'draft: ');
  const supervisor = createSupervisor(studio, providers, { log: lines.log });
  let stopped: string | null = null;
  const on = (signal: string) => () => void (stopped = `stopped by ${signal}`);
  const int = on('Ctrl-C (SIGINT)');
  const term = on('SIGTERM');
  process.once('SIGINT', int);
  process.once('SIGTERM', term);
  // The engine stops polling at the poll deadline and looks again only slowly after it (executor.ts).
  const poll = studio.settings.engine.poll;
  const until = Date.now() + poll.deadlineMs + 2 * poll.maxIntervalMs;
  try {
    await supervisor.start();
    for (;;) {
      const task = (await studio.tasks.get(id))!;
      if (ENDED.has(task.status)) return task;
      if (stopped) return stopped;
      if (Date.now() > until) return `the provider had not finished the draft within the poll deadline (${Math.round(poll.deadlineMs / 1000)} s)`;
      await studio.clock.sleep(200);
    }
  } finally {
    process.off('SIGINT', int);
    process.off('SIGTERM', term);
    await supervisor.stop();
    await lines.settled();
  }
}

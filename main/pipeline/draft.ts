import { readFile } from 'node:fs/promises';
import { estimateCost } from '../engine/estimator.ts';
import { isSimulated } from '../domain/simulated.ts';
import { keepAsked, readDraftAnswer, type DraftRequest } from '../domain/storyboardDraft.ts';
import { StoryboardError, type Storyboard } from '../domain/storyboard.ts';
import { StaleStoryboard } from '../domain/storyboardRevision.ts';
import { inputHash } from '../domain/tasks/inputHash.ts';
import { keptAnswer } from '../domain/tasks/keptAnswer.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import { MissingKey } from '../providers/invalidInput.ts';
import { prepareWithoutKey } from '../providers/registry.ts';
import { parseStoryboard } from '../providers/storyboards.ts';
import type { Studio } from '../studio.ts';

/** The text models a storyboard is drafted with: the simulator's (offline, made-up money) and OpenAI's. */
const DRAFT_MODELS: Readonly<Record<string, string>> = { simulator: 'sim-draft-1', 'openai-responses': 'gpt-4.1-mini' };

/** A draft that cannot be started or put on the storyboard, in words that say what to do. */
export class DraftRefused extends Error {}

/** The same draft failed after it was paid for: asking again pays again, so only when asked for knowingly (409). */
export class DraftPaidAndFailed extends DraftRefused {}

/**
 * A draft finished while someone else saved the storyboard: said for a draft, where revision 0 means the project had
 * no storyboard yet when the draft began, and the draft stays kept to put on it later at no charge.
 */
class DraftStale extends StaleStoryboard {
  constructor(project: string, from: number, current: number, taskId: number) {
    super(project, from, current);
    const since = from === 0 ? `a storyboard of "${project}" was saved (revision ${current}) while task ${taskId} drafted the project's first one` : `the storyboard of "${project}" was saved by someone else since revision ${from} (it is at revision ${current} now)`;
    this.message = `${since}, so it was not overwritten; the draft is kept: draft the same idea over revision ${current} to put it there, at no charge`;
  }
}

/** Drafts that ended with no draft and that a provider may have billed (failed, or cancelled after it was sent): paid, so the same request is not sent again unasked. */
const PAID_FAILURE = (t: Task) => (t.status === 'FAILED' || t.status === 'CANCELLED') && t.charged !== 'no';

export interface DraftEstimate {
  provider: string;
  model: string;
  /** Micro-units of `currency`; null when no price is known. */
  cost: number | null;
  currency: string;
  source: string;
  simulated: boolean;
  /** The finished draft task of the same idea that is used again, at no charge, or null. */
  reuses: number | null;
}

/**
 * Which model drafts: the simulator while the project's images come from the simulator (the studio with no key),
 * else OpenAI; `asked` ("simulator" or "openai") chooses.
 */
export function draftProvider(asked: string | undefined, imageProvider: string): string {
  if (asked === undefined) return isSimulated(imageProvider) ? 'simulator' : 'openai-responses';
  if (asked === 'simulator') return 'simulator';
  if (asked === 'openai' || asked === 'openai-responses') return 'openai-responses';
  throw new DraftRefused(`a storyboard is drafted by "simulator" or "openai", not "${asked}"`);
}

/** The newest finished draft task of this exact idea and scene count in the project, if any. */
function reusable(tasks: Task[]): Task | undefined {
  return tasks.filter((t) => t.kind === 'draft' && t.status === 'SUCCEEDED').sort((a, b) => b.id - a.id)[0];
}

/** What drafting would cost, worked out as the task will be sent, or nothing when the same draft is already paid for. */
export async function estimateDraft(studio: Studio, adapter: ProviderAdapter, projectName: string, request: DraftRequest, provider: string): Promise<DraftEstimate> {
  const model = DRAFT_MODELS[provider]!;
  const project = await studio.projects.byName(projectName);
  const same = project ? reusable(await studio.tasks.withSameInput(project.id, inputHash(provider, model, request))) : undefined;
  const currency = project?.currency ?? 'USD';
  if (same) return { provider, model, cost: 0, currency, source: `reused: task ${same.id} drafted this idea already`, simulated: isSimulated(provider), reuses: same.id };
  let prepared;
  try {
    prepared = prepareWithoutKey(provider, { kind: 'draft', model, input: request });
  } catch (err) {
    if (err instanceof MissingKey) throw new DraftRefused(err.message);
    throw err;
  }
  const e = await estimateCost(adapter, prepared, studio.settings.prices, false);
  return { provider, model, cost: e?.cost ?? null, currency: e?.currency ?? currency, source: e?.source ?? 'no price known', simulated: isSimulated(provider), reuses: null };
}

/**
 * The draft task for this idea: the finished one of the same idea (never paid twice), one already under way, or a new
 * one with its estimate. The check and the enqueue are one transaction, so two at once make one task.
 */
export async function startDraft(studio: Studio, projectName: string, request: DraftRequest, estimate: DraftEstimate, again = false): Promise<Task> {
  const now = studio.clock.now();
  return studio.store.transaction(async (tx) => {
    const project = await tx.projects.ensure(projectName, now);
    const same = (await tx.tasks.withSameInput(project.id, inputHash(estimate.provider, estimate.model, request))).filter((t) => t.kind === 'draft');
    const done = reusable(same);
    if (done) return done;
    const going = same.find((t) => t.status === 'PENDING' || t.status === 'RUNNING' || t.status === 'SUBMITTED');
    if (going) return going;
    const unknown = same.find((t) => t.status === 'OUTCOME_UNKNOWN');
    if (unknown) {
      throw new DraftRefused(
        `task ${unknown.id} drafted this idea and its outcome is unknown (it may have been paid for); decide it first with "studio resolve ${unknown.id}", so it is not paid for twice`,
      );
    }
    const paid = same.filter(PAID_FAILURE).sort((a, b) => b.id - a.id)[0];
    if (paid && !again) {
      throw new DraftPaidAndFailed(
        `task ${paid.id} drafted this very idea and ${paid.status === 'CANCELLED' ? 'was cancelled' : 'failed'} after it was ${paid.charged === 'yes' ? 'paid for' : 'possibly paid for'} (${paid.error ?? paid.note ?? 'no reason kept'}); drafting it again is paid again, so ask for it knowingly (--again), or change the idea or the number of scenes`,
      );
    }
    return tx.tasks.enqueue(
      { projectId: project.id, kind: 'draft', provider: estimate.provider, model: estimate.model, input: request, estimate: { cost: estimate.cost, source: estimate.source, currency: estimate.currency } },
      now,
    );
  });
}

/**
 * What the model answered for a draft task: kept in the task's history (the database, so any machine of a team reads
 * it), else in its saved file on this machine (drafts made before answers were kept there); null when neither has it.
 */
async function answerOf(studio: Studio, task: Task): Promise<string | null> {
  const kept = keptAnswer(await studio.tasks.events(task.id));
  if (kept !== null) return kept;
  const found = await studio.files.file(task.id, 0, `the draft of task ${task.id}`);
  return found && found.state === 'here' ? readFile(found.path, 'utf8') : null;
}

/** A paid draft's answer as the model wrote it, with what keeps it from being a storyboard (none: it is one). */
export async function shownAnswer(studio: Studio, taskId: number): Promise<{ task: Task; text: string; problem: string | null }> {
  const task = await studio.tasks.get(taskId);
  if (!task || task.kind !== 'draft') throw new DraftRefused(`task ${taskId} is no storyboard draft; "studio tasks" lists them`);
  const text = await answerOf(studio, task);
  if (text === null) throw new DraftRefused(`task ${taskId} kept no answer (${task.status.toLowerCase()}${task.error ? `: ${task.error}` : ''})`);
  try {
    readDraftAnswer(text);
    return { task, text, problem: null };
  } catch (err) {
    if (err instanceof StoryboardError) return { task, text, problem: err.message };
    throw err;
  }
}

/**
 * The finished draft as a storyboard: its scenes (no more than were asked; `dropped` counts those left out), in the
 * frame, steps and speed of the storyboard it replaces.
 */
async function draftBoard(studio: Studio, task: Task, replaces: Storyboard | undefined): Promise<{ board: Storyboard; dropped: number }> {
  const text = await answerOf(studio, task);
  if (text === null) throw new DraftRefused(`task ${task.id} kept no draft`);
  let board: Storyboard;
  try {
    board = readDraftAnswer(text);
  } catch (err) {
    if (err instanceof StoryboardError) throw new DraftRefused(`the draft of task ${task.id} is not a storyboard the studio can use: ${err.message}`);
    throw err;
  }
  const asked = keepAsked(board, (task.input as Partial<DraftRequest>).scenes ?? board.scenes.length);
  const frame = replaces ? { width: replaces.width, height: replaces.height, fit: replaces.fit, fps: replaces.fps, steps: replaces.steps } : {};
  const scenes = asked.board.scenes.map(({ imagePrompt, motionPrompt, narration, duration }) => ({ imagePrompt, motionPrompt, narration, duration }));
  return { board: parseStoryboard({ ...frame, scenes }), dropped: asked.dropped };
}

/**
 * Puts a finished draft on the project's storyboard, made from revision `from` (0: the project had none): a
 * storyboard saved since is never overwritten (DraftStale), unless it is this very draft, put there by another run
 * of the same draft (`already`). Returns the revision it is at.
 */
export async function applyDraft(studio: Studio, projectName: string, task: Task, from: number): Promise<{ revision: number; scenes: number; dropped: number; already: boolean }> {
  const project = await studio.projects.byName(projectName);
  if (!project || project.id !== task.projectId) throw new DraftRefused(`task ${task.id} is not a draft of "${projectName}"`);
  const { board, dropped } = await draftBoard(studio, task, await studio.storyboards.get(project.id));
  try {
    const revision = await studio.store.transaction((tx) => tx.storyboards.save(project.id, board, studio.clock.now(), from));
    return { revision, scenes: board.scenes.length, dropped, already: false };
  } catch (err) {
    if (!(err instanceof StaleStoryboard)) throw err;
    const now = await studio.storyboards.get(project.id);
    if (now && JSON.stringify(now.scenes) === JSON.stringify(board.scenes)) return { revision: err.current, scenes: board.scenes.length, dropped, already: true };
    throw new DraftStale(projectName, err.from, err.current, task.id);
  }
}

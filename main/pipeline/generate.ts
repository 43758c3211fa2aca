import type { Preset } from '../domain/presets.ts';
import { movedWords, ProjectMoved } from '../domain/projectMoved.ts';
import type { Project } from '../domain/project.ts';
import type { Storyboard } from '../domain/storyboard.ts';
import { decide } from './decide.ts';
import { enqueuePriced, notMade } from './enqueue.ts';
import type { GenerateEstimate } from './estimate.ts';
import type { GenerateOptions, PipelineDeps } from './generateOptions.ts';
import { withSavings } from './moveSavings.ts';
import { withNewTakes, type TakeChoice } from './newTakes.ts';
import { OwnMediaRefused } from './ownFiles.ts';
import { ownScenes } from './ownScenes.ts';
import { walk } from './pricing.ts';
import { GenerateRefused } from './refusals.ts';
import type { Decided } from './reuse.ts';

export { GenerateRefused } from './refusals.ts';

/**
 * Turns a project's storyboard into tasks. Each step is reused when an identical one (same provider, model
 * and input, seed included) is already in the project; only new steps are estimated, checked against the
 * budget and enqueued. Editing one scene therefore regenerates that scene's steps and the render only.
 * A step paid for before whose result was lost is never bought again unless the person confirms it.
 */
export class Pipeline {
  constructor(private readonly deps: PipelineDeps) {}

  private async storyboardOf(projectName: string): Promise<{ project: Project; board: Storyboard; revision: number }> {
    const { studio } = this.deps;
    const project = await studio.projects.byName(projectName);
    if (!project) throw new GenerateRefused(`there is no project "${projectName}"`);
    if (project.moved) throw new ProjectMoved(movedWords(project.moved));
    // The revision first: read beside a newer board, the enqueue refuses it rather than let an older one through.
    const revision = await studio.storyboards.revision(project.id);
    const board = await studio.storyboards.get(project.id);
    if (!board) throw new GenerateRefused(`project "${projectName}" has no storyboard yet; create one with "studio storyboard create"`);
    return { project, board, revision };
  }

  /** The storyboard's steps, each judged by the tasks the project has now, as a Generate would; reads only, no network. */
  async current(project: Project): Promise<Decided[] | null> {
    const board = await this.deps.studio.storyboards.get(project.id);
    return board ? decide(this.deps, project, board, {}, this.deps.studio, await this.own(project, board, false)) : null;
  }

  /** Each scene's own still and clip (see ownScenes.ts); with `copy`, a file is copied into the project. */
  private async own(project: Project, board: Storyboard, copy: boolean) {
    try {
      return await ownScenes(this.deps.studio, project, board, copy);
    } catch (err) {
      if (err instanceof OwnMediaRefused) throw new GenerateRefused(`${err.message}. Nothing was enqueued.`);
      throw err;
    }
  }

  /** What a Generate would do and cost, step by step, without doing it. */
  async estimate(projectName: string, newTakes: string[] = [], take: TakeChoice = {}): Promise<GenerateEstimate> {
    const { project, board: saved } = await this.storyboardOf(projectName);
    const board = await this.withNewTakes(project, saved, newTakes, take);
    const own = await this.own(project, board, false);
    const options = { newTakes, take };
    // Each move to the same model elsewhere is weighed by the whole plan after it (moveSavings.ts).
    return withSavings(await walk(this.deps, project, own.board, options, own), board, (moved) => this.priced(project, moved, options));
  }

  /** A storyboard in place of the saved one, priced as a Generate would price it, without offers; buys nothing. */
  async priced(project: Project, board: Storyboard, options: GenerateOptions = {}): Promise<GenerateEstimate> {
    const own = await this.own(project, board, false);
    return walk({ ...this.deps, offers: false }, project, own.board, options, own);
  }

  /** Each named scene's new take (see newTakes.ts), numbered past every take the scene has had. */
  private async withNewTakes(project: Project, board: Storyboard, scenes: string[], take: TakeChoice = {}): Promise<Storyboard> {
    return withNewTakes(board, scenes, scenes.length === 0 ? [] : await this.deps.studio.takes.list(project.id), take);
  }

  /**
   * Renders each scene's picked take again, even when an identical render exists; buys nothing. A scene with no
   * take yet is rendered from the storyboard only if all of its steps are made. With a preset, the film is exported
   * in that shape or format instead (presets.ts).
   */
  async render(projectName: string, preset?: Preset): Promise<GenerateEstimate> {
    const { project, board } = await this.storyboardOf(projectName);
    const options: GenerateOptions = { freshRender: true, renderOnly: true, ...(preset ? { preset } : {}) };
    const own = await this.own(project, board, false);
    // Refused early, before any pricing; enqueuePriced refuses again at the enqueue, for a storyboard saved meanwhile.
    const missing = notMade(await decide(this.deps, project, board, options, this.deps.studio, own));
    if (missing.length > 0) throw new GenerateRefused(`${missing.join(', ')} not made yet: generate them first`);
    return this.generate(projectName, options);
  }

  /**
   * Enqueues the new steps of the storyboard, refusing (with the amount) a Generate that would take the project
   * past its budget, and one that would buy a lost result again unless `rebuyLost` confirms it. A new take of a
   * scene is kept in its storyboard, so the next Generate reuses it.
   */
  async generate(projectName: string, options: GenerateOptions = {}): Promise<GenerateEstimate> {
    const { studio } = this.deps;
    const { project: named, board: saved, revision } = await this.storyboardOf(projectName);
    // A file is copied into the project before anything is judged: the clip is made from the copy, not the original.
    const own = await this.own(named, await this.withNewTakes(named, saved, options.newTakes ?? [], options.take), true);
    const board = own.board;
    const priced = await walk(this.deps, named, board, options, own);
    const now = studio.clock.now();
    // Pricing awaited the network, so another Generate (in this process or another, on this machine or another)
    // may have enqueued the same steps, or spent the budget, meanwhile. Holding the project, then judging every
    // step again, checking the budget and enqueueing in one write transaction means two Generates of a project
    // go one after the other: the second reuses what the first enqueued, and is judged against what it spent.
    return studio.store.transaction((tx) => enqueuePriced(this.deps, tx, { projectName, named, saved, revision, board, own, priced, options, now }));
  }
}

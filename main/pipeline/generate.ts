import { existsSync } from 'node:fs';
import { estimateCost } from '../engine/estimator.ts';
import type { Project } from '../projects/repository.ts';
import { InvalidInput } from '../providers/port.ts';
import type { Studio } from '../studio.ts';
import { inputHash } from '../tasks/inputHash.ts';
import type { Task } from '../tasks/model.ts';
import { bindStepRefs, planStoryboard, RENDER_PROVIDER, stepRefsAs, type PlannedStep } from './planner.ts';
import { sceneById, type StepChoice, type StepKind, type Storyboard } from './storyboard.ts';

export interface StepEstimate {
  key: string;
  scene: string | null;
  kind: PlannedStep['kind'];
  provider: string;
  model: string;
  /** reuse: an identical step already in the project stands in for it, at no cost. */
  action: 'new' | 'reuse';
  taskId: number | null;
  /** Micro-units of `currency`; 0 for reused and local steps. */
  cost: number;
  currency: string;
  source: string;
}

export interface GenerateEstimate {
  project: Project;
  steps: StepEstimate[];
  /** What the new steps may cost. */
  total: number;
  /** What the project has spent or may have spent already. */
  spent: number;
  budget: number | null;
  /** How far past the budget this Generate would go, or 0. */
  overBy: number;
}

export class GenerateRefused extends Error {}

export interface PipelineDeps {
  studio: Studio;
  /** Adapters, used only to validate inputs and ask for quotes; nothing is sent from here. */
  provider: (id: string) => import('../providers/port.ts').ProviderAdapter | undefined;
  defaults: Record<StepKind, StepChoice>;
}

const money = (micros: number, currency: string) => `${(micros / 1e6).toFixed(2)} ${currency}`;

/** A finished result whose file is gone is no result to build on. */
function usable(task: Task | undefined): task is Task {
  return !!task && (task.status !== 'SUCCEEDED' || (!!task.outputPath && existsSync(task.outputPath)));
}

/**
 * Turns a project's storyboard into tasks. Each step is reused when an identical one (same provider, model
 * and input, seed included) is already in the project; only new steps are estimated, checked against the
 * budget and enqueued. Editing one scene therefore regenerates that scene's steps and the render only.
 */
export class Pipeline {
  constructor(private readonly deps: PipelineDeps) {}

  private storyboardOf(projectName: string): { project: Project; board: Storyboard } {
    const { studio } = this.deps;
    const project = studio.projects.byName(projectName);
    if (!project) throw new GenerateRefused(`there is no project "${projectName}"`);
    const board = studio.storyboards.get(project.id);
    if (!board) throw new GenerateRefused(`project "${projectName}" has no storyboard yet; create one with "studio storyboard create"`);
    return { project, board };
  }

  /** Walks the plan in order, binding each step to the task ids of the steps it uses. */
  private async walk(project: Project, board: Storyboard, options: { freshRender?: boolean }) {
    const { studio } = this.deps;
    const ids = new Map<string, number>();
    const walked: { step: PlannedStep; input: unknown | undefined; reuse: Task | undefined; estimate: StepEstimate }[] = [];
    for (const step of planStoryboard(board, this.deps.defaults)) {
      const input = bindStepRefs(step.input, ids);
      const candidate = input === undefined ? undefined : studio.tasks.findReusable(project.id, inputHash(step.provider, step.model, input));
      const reuse = usable(candidate) && !(options.freshRender && step.kind === 'render') ? candidate : undefined;
      if (reuse) ids.set(step.key, reuse.id);
      const estimate = reuse
        ? { cost: 0, currency: project.currency, source: `reused: task ${reuse.id} already has this exact step` }
        : await this.price(step);
      walked.push({
        step,
        input,
        reuse,
        estimate: { key: step.key, scene: step.scene, kind: step.kind, provider: step.provider, model: step.model, action: reuse ? 'reuse' : 'new', taskId: reuse?.id ?? null, ...estimate },
      });
    }
    const newCost = walked.filter((w) => !w.reuse).reduce((sum, w) => sum + w.estimate.cost, 0);
    const spend = studio.tasks.spend(project.id)[0]!;
    const spent = spend.actual + spend.estimated + spend.possiblyCharged;
    const overBy = project.budget === null ? 0 : Math.max(0, spent + newCost - project.budget);
    return { walked, estimate: { project, steps: walked.map((w) => w.estimate), total: newCost, spent, budget: project.budget, overBy } };
  }

  /** Validates a step's input as its adapter will, and prices it: the provider's quote, else the catalogue. */
  private async price(step: PlannedStep): Promise<Pick<StepEstimate, 'cost' | 'currency' | 'source'>> {
    if (step.provider === RENDER_PROVIDER) return { cost: 0, currency: 'USD', source: 'made on this machine: no charge' };
    const adapter = this.deps.provider(step.provider);
    if (!adapter) throw new GenerateRefused(`step ${step.key}: there is no provider "${step.provider}"`);
    let request;
    try {
      // The step's inputs from other steps do not exist yet; a stand-in lets the rest be checked.
      request = adapter.prepare({ kind: step.kind, model: step.model, input: stepRefsAs(step.input, 'data:image/png;base64,') });
    } catch (err) {
      if (err instanceof InvalidInput) throw new GenerateRefused(`step ${step.key} (${step.provider} ${step.model}): ${err.message}`);
      throw err;
    }
    const estimate = await estimateCost(adapter, request);
    return estimate ?? { cost: 0, currency: 'USD', source: `no price known for ${step.provider} ${step.model}; add it to the catalogue` };
  }

  /** What a Generate would do and cost, step by step, without doing it. */
  async estimate(projectName: string, newTakes: string[] = []): Promise<GenerateEstimate> {
    const { project, board } = this.storyboardOf(projectName);
    return (await this.walk(project, this.withNewTakes(board, newTakes), {})).estimate;
  }

  private withNewTakes(board: Storyboard, scenes: string[]): Storyboard {
    if (scenes.length === 0) return board;
    for (const id of scenes) sceneById(board, id);
    return { ...board, scenes: board.scenes.map((s) => (scenes.includes(s.id) ? { ...s, take: s.take + 1 } : s)) };
  }

  /**
   * Enqueues the new steps of the storyboard, refusing (with the amount) a Generate that would take the project
   * past its budget. A new take of a scene is kept in its storyboard, so the next Generate reuses it.
   */
  async generate(projectName: string, options: { newTakes?: string[]; freshRender?: boolean } = {}): Promise<GenerateEstimate> {
    const { studio } = this.deps;
    const { project, board: saved } = this.storyboardOf(projectName);
    const board = this.withNewTakes(saved, options.newTakes ?? []);
    const { walked, estimate } = await this.walk(project, board, options);
    if (estimate.overBy > 0) {
      throw new GenerateRefused(
        `this Generate would cost about ${money(estimate.total, project.currency)}; with ${money(estimate.spent, project.currency)} ` +
          `already spent or possibly charged, that is ${money(estimate.overBy, project.currency)} over the budget of ` +
          `${money(project.budget!, project.currency)}. Raise the budget or change the storyboard; nothing was enqueued.`,
      );
    }
    const now = studio.clock.now();
    studio.tasks.batch(() => {
      if (board !== saved) studio.storyboards.save(project.id, board, now);
      const ids = new Map<string, number>();
      for (const { step, reuse, estimate: e } of walked) {
        if (reuse) {
          ids.set(step.key, reuse.id);
          continue;
        }
        const input = bindStepRefs(step.input, ids) as Record<string, unknown>;
        const task = studio.tasks.enqueue(
          { projectId: project.id, kind: step.kind, provider: step.provider, model: step.model, input, dependsOn: step.dependsOn.map((k) => ids.get(k)!) },
          now,
        );
        ids.set(step.key, task.id);
        e.taskId = task.id;
      }
    });
    return estimate;
  }
}

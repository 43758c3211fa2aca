import { Pipeline } from '../pipeline/generate.ts';
import { StoryboardError } from '../domain/storyboard.ts';
import type { Project } from '../domain/project.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { Providers } from '../providers/registry.ts';
import type { Studio } from '../studio.ts';
import type { Logger } from '../logging/logger.ts';
import type { Redaction } from '../logging/redact.ts';
import { ApiError } from './apiErrors.ts';
import type { KeySource } from './contract.ts';

export interface KeyStore {
  /** Where a provider's key comes from, if it has one; 'unreadable': stored, but it cannot be decrypted here. */
  source(provider: string): KeySource;
  /** Saves or removes a key; the desktop's engine process has it saved by the main process, so it may be awaited. */
  set(provider: string, value: string | null): void | Promise<void>;
  encrypted: boolean;
  /** A key that is no provider's request key (fal's admin key, FAL_ADMIN_KEY_NAME), kept where the request keys are. */
  secret(name: string): string | undefined;
}

/** fal's ADMIN-scope key, read only for fal's usage records: kept in the key store beside the request keys, never in a request. */
export const FAL_ADMIN_KEY_NAME = 'fal-admin';

export interface ServiceDeps {
  studio: Studio;
  providers: Providers;
  keys: KeyStore;
  /** How the UI reaches a task's output: `/media/ID` over loopback, `studio-media://task/ID` in the app. */
  mediaUrl: (taskId: number) => string;
  /** The engine's pause, if it is paused, as the supervisor of this process sees it. */
  paused: () => { reason: string; since: number } | null;
  /** What "Copy diagnostics" tells of this process beyond the studio itself (diagnosticsCalls.ts). */
  diagnostics?: DiagnosticsDeps;
}

export interface DiagnosticsDeps {
  /** This process's log: its folder and its last lines. */
  logger?: Logger;
  /** The cut every line of this process goes through, holding the studio's keys; the diagnostics text goes through it too. */
  redaction: Redaction;
  /** Folders of the host's own to name (the desktop's crash dumps), by what they hold. */
  folders?: Record<string, string>;
  /** Whether this process's engine was started and is not stopped, and whether paid work of it is in flight. */
  engine(): { state: 'not started' | 'running' | 'stopped'; paidWorkInFlight: boolean };
}

/** What every group of the StudioApi's calls shares: the studio over one data folder, its pipeline, and its projects by name. */
export interface ServiceContext {
  readonly deps: ServiceDeps;
  readonly studio: Studio;
  readonly pipeline: Pipeline;
  project(name: string): Promise<Project>;
}

export function serviceContext(deps: ServiceDeps): ServiceContext {
  const pipeline = new Pipeline({ studio: deps.studio, provider: deps.providers.get, defaults: deps.studio.settings.defaults, prices: () => deps.studio.settings.prices });
  return {
    deps,
    pipeline,
    get studio() {
      return deps.studio;
    },
    async project(name: string): Promise<Project> {
      const project = await deps.studio.projects.byName(name);
      if (!project) throw new ApiError(`there is no project "${name}"`);
      return project;
    },
  };
}

/** A task by its id, with its project's name. */
export async function named(ctx: ServiceContext, id: number): Promise<{ task: Task; project: string }> {
  const task = await ctx.studio.tasks.get(id);
  if (!task) throw new ApiError(`there is no task ${id}`);
  return { task, project: (await ctx.studio.projects.list()).find((p) => p.id === task.projectId)!.name };
}

/** The storyboard's steps judged by the project's tasks now; null without a storyboard, or one that no longer passes the checks. */
export async function currentPlan(ctx: ServiceContext, project: Project) {
  try {
    return await ctx.pipeline.current(project);
  } catch (err) {
    if (err instanceof StoryboardError) return null;
    throw err;
  }
}

import { API_METHODS } from '../main/api/contract.ts';
import { useOwnMusic, useOwnPicture } from '../main/api/ownPictureFile.ts';
import { ownPicturePath } from '../main/api/ownUpload.ts';
import { ApiError } from '../main/api/studioService.ts';
import type { Runtime } from '../main/runtime.ts';
import type { Studio } from '../main/studio.ts';
import { INTERNAL_ERROR, type Answer, type EngineRequest } from './engineProtocol.ts';
import { fileName } from './outputFile.ts';

/** Runs `work`, answering its result, or its refusal in words; anything else is a bug, logged with `what`. */
async function answered(what: string, work: () => Promise<unknown>, log: (m: string) => void): Promise<Answer> {
  try {
    return { result: (await work()) ?? null };
  } catch (err) {
    if (err instanceof ApiError) return { error: err.message };
    log(`${what}: ${(err as Error).stack ?? String(err)}`);
    return { error: INTERNAL_ERROR };
  }
}

/** A picture, clip or music file the person picked, checked and copied into the project as an upload is. */
export function ownFileAnswer(studio: Studio, what: 'picture' | 'music', args: unknown[], log: (m: string) => void): Promise<Answer> {
  return answered(
    `own ${what}`,
    () => (what === 'picture' ? useOwnPicture(studio, ...(args as [string, string, string])) : useOwnMusic(studio, ...(args as [string, string]))),
    log,
  );
}

/** A finished task's output file and the name to offer for a copy, or null when it has none. */
async function outputFile(studio: Studio, id: number): Promise<{ path: string; name: string } | null> {
  const task = await studio.tasks.get(id);
  if (!task?.outputPath || task.status !== 'SUCCEEDED') return null;
  const project = (await studio.projects.list()).find((p) => p.id === task.projectId)?.name ?? 'video';
  const path = studio.media.resolve(task.outputPath);
  return { path, name: fileName(project, task.kind, id, path, (task.input as { preset?: string }).preset) };
}

/** The engine process's answer to one request of the main process. */
export function answerRequest(runtime: Runtime, request: EngineRequest, log: (m: string) => void): Promise<Answer> {
  const { studio } = runtime;
  switch (request.kind) {
    case 'api':
      return answered(
        request.method,
        async () => {
          // Checked in the main process too (app/ipcValidation.ts); a name off the list reaches nothing here either.
          if (!(API_METHODS as readonly string[]).includes(request.method)) throw new ApiError(`there is no method ${request.method}`);
          return (runtime.service[request.method as (typeof API_METHODS)[number]] as (...a: unknown[]) => Promise<unknown>)(...request.args);
        },
        log,
      );
    case 'own':
      return ownFileAnswer(studio, request.what, request.args, log);
    case 'outputPath':
      return answered(
        'a result file',
        async () => {
          const found = await studio.files.file(request.taskId, request.index, `task ${request.taskId}'s result`);
          return found?.state === 'here' ? found.path : null;
        },
        log,
      );
    case 'ownPicturePath':
      return answered('an own picture', () => ownPicturePath(studio, request.project, request.sha256), log);
    case 'outputFile':
      return answered('a result to save or show', () => outputFile(studio, request.taskId), log);
  }
}

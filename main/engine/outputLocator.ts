import type { TaskStore } from '../store/port.ts';
import type { TaskOutput } from '../domain/tasks/model.ts';
import { FileChecks } from '../media/fileChecks.ts';
import type { MediaFolder } from '../media/mediaFolder.ts';
import { notHereWords } from '../media/outputWords.ts';

/** A saved file as found on this machine: here, or why not in words for the person. */
export type Located = { state: 'here'; path: string } | { state: 'missing' | 'changed'; path: string; words: string };

/** A file another step needs is not here, or not the file that was saved: the message says which machine has it. */
export class OutputNotHere extends Error {}

type OutputFacts = Pick<TaskOutput, 'path' | 'sha256' | 'bytes' | 'machine'>;

/** Where the results another step uses are found on this machine, checked whole. */
export type InputFiles = Pick<OutputLocator, 'input' | 'imported'>;

/** Finds saved results on this machine, through its media folder, and says why one cannot be read here. */
export class OutputLocator {
  constructor(
    private readonly tasks: Pick<TaskStore, 'get' | 'outputs'>,
    readonly media: MediaFolder,
    private readonly checks = new FileChecks(),
  ) {}

  /**
   * One file as this machine has it, at the first of its places that holds it whole; `deep` compares its checksum,
   * else only its size. A file found nowhere says each place it was looked for.
   */
  async check(output: OutputFacts, subject: string, deep: boolean): Promise<Located> {
    let first: { state: 'missing' | 'changed'; path: string } | null = null;
    for (const path of this.media.places(output.path)) {
      const state = await this.checks.state(path, output, deep);
      if (state === 'here') return { state, path };
      if (first === null || (first.state === 'missing' && state === 'changed')) first = { state, path };
    }
    return { ...first!, words: notHereWords(subject, output, first!.state, this.media) };
  }

  /** File `index` of a task's kept result, checked by checksum; null when the task has no such file kept. */
  async file(taskId: number, index: number, subject: string): Promise<Located | null> {
    const task = await this.tasks.get(taskId);
    if (task?.status !== 'SUCCEEDED' || task.outputPath === null) return null;
    const output = (await this.tasks.outputs(taskId)).find((o) => o.index === index);
    return output ? this.check(output, subject, true) : null;
  }

  /** Where a still the creator brought (copied into the project) is on this machine, checked whole; OutputNotHere says why not. */
  async imported(ref: { $file: string; sha256: string; bytes: number }, subject: string): Promise<string> {
    const found = await this.check({ path: ref.$file, sha256: ref.sha256, bytes: ref.bytes, machine: null }, subject, true);
    if (found.state !== 'here') throw new OutputNotHere(found.words);
    return found.path;
  }

  /** Where the result another step uses is on this machine, checked whole; OutputNotHere says why it cannot be used. */
  async input(taskId: number, subject: string): Promise<string> {
    const task = await this.tasks.get(taskId);
    if (task?.status !== 'SUCCEEDED' || !task.outputPath) throw new Error(`task ${taskId}, whose result this step uses, has no saved result`);
    const [first] = await this.tasks.outputs(taskId);
    const found = await this.check(first ?? { path: task.outputPath, sha256: task.outputSha256 ?? '', bytes: null, machine: null }, subject, first !== undefined);
    if (found.state !== 'here') throw new OutputNotHere(found.words);
    return found.path;
  }
}

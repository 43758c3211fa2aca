import { MAX_ENTRY } from './logLine.ts';
import { PROMPT_CUT, PROMPT_FIELDS } from './redact.ts';

/**
 * Where a prompt can reach a log today: a provider's answer quoting the input it was given, whose detail becomes
 * the message (main/providers/providerHttp.ts, plainProblem), on the engine's lines about a task: "task N: status
 * stream: …" (main/engine/poller.ts), "task N: …" with a result's answer (executor.ts). A quote is often cut short or
 * escaped, so any long enough piece of the task's own prompts is cut, not only the whole text; JSON fields named
 * like a prompt are cut from every line besides (redact.ts), and the command line logs no command's arguments.
 */

/** A piece of a prompt this long, found in a line, is looked for around; one at least CUT_FROM long is cut. */
const PIECE = 10;
const CUT_FROM = 2 * PIECE;
/** Shorter prompts are cut only whole: a word or two of one is an ordinary word. */
const SHORTEST = 4;

/** The prompts in a task's input: every text under a prompt's field, at any depth. */
export function promptsIn(input: unknown, field = ''): string[] {
  if (typeof input === 'string') return PROMPT_FIELDS.includes(field) && input.trim().length >= SHORTEST ? [input] : [];
  if (!input || typeof input !== 'object') return [];
  return Object.entries(input as Record<string, unknown>).flatMap(([k, v]) => promptsIn(v, Array.isArray(input) ? field : k));
}

/** `line` with each prompt cut: whole, JSON-escaped, and any piece of CUT_FROM characters or more that the line quotes. */
export function cutPrompts(line: string, prompts: readonly string[]): string {
  let out = line;
  const texts = [...new Set(prompts.flatMap((p) => [p, JSON.stringify(p).slice(1, -1)]))].sort((a, b) => b.length - a.length);
  for (const text of texts) {
    out = out.split(text).join(PROMPT_CUT);
    if (text.length < CUT_FROM) continue;
    for (let at = 0; at + PIECE <= text.length; at += PIECE) {
      const piece = text.slice(at, at + PIECE);
      let found = out.indexOf(piece);
      while (found >= 0) {
        // Widen the match both ways while the line goes on as the prompt does.
        let start = found;
        let from = at;
        while (start > 0 && from > 0 && out[start - 1] === text[from - 1]) (start--, from--);
        let end = found + PIECE;
        let to = at + PIECE;
        while (end < out.length && to < text.length && out[end] === text[to]) (end++, to++);
        if (end - start >= CUT_FROM) {
          out = `${out.slice(0, start)}${PROMPT_CUT}${out.slice(end)}`;
          found = out.indexOf(piece, start + PROMPT_CUT.length);
        } else found = out.indexOf(piece, found + 1);
      }
    }
  }
  return out;
}

const TASK_LINE = /^task (\d+):/;

/**
 * The engine's lines on their way to a log, each "task N: …" line with task N's prompts cut unless prompts are
 * allowed. The input is read from the store, so these lines go out in the order logged once their reads are done;
 * `settled` waits for them, before the store closes. A line whose task cannot be read says so instead of its text.
 */
export function taskLines(write: (message: string) => void, inputOf: (taskId: number) => Promise<unknown>, allowed: () => boolean) {
  let queue: Promise<void> = Promise.resolve();
  let waiting = 0;
  const later = (line: () => Promise<string>) => {
    waiting++;
    queue = queue
      .then(line)
      .then(write)
      .catch(() => undefined)
      .finally(() => waiting--);
  };
  return {
    log(message: string): void {
      const task = TASK_LINE.exec(message);
      if (!task || allowed()) {
        if (waiting === 0) write(message);
        else later(async () => message);
        return;
      }
      later(() =>
        inputOf(Number(task[1])).then(
          // The log keeps only the start of a long line (logLine.ts capped); only that much is looked through.
          (input) => cutPrompts(message.slice(0, 4 * MAX_ENTRY), promptsIn(input)),
          (err: Error) => `task ${task[1]}: (a line of this task is left out: its prompt could not be read to cut it out: ${err.message})`,
        ),
      );
    },
    settled(): Promise<void> {
      return queue;
    },
  };
}

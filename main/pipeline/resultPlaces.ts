import type { MediaFolder } from '../media/mediaFolder.ts';
import { notHereWords } from '../media/outputWords.ts';
import { savedBy } from '../media/savedBy.ts';
import type { TaskStore } from '../store/port.ts';
import type { Task } from '../domain/tasks/model.ts';
import type { ResultPlace } from './reuse.ts';
import { hasOutput } from './takes.ts';

/**
 * Where each finished task's result is, as this machine sees it, by task id. A file not here that another
 * machine saved is that machine's, said in the words the render and the media endpoint use; a file this machine
 * saved, or one saved before machines were recorded, is gone, with each place it was looked for.
 */
export async function resultPlaces(
  tasks: Pick<TaskStore, 'outputs'>,
  media: Pick<MediaFolder, 'root' | 'machine' | 'machineId' | 'resolve' | 'places'>,
  earlier: readonly Task[],
): Promise<Map<number, ResultPlace>> {
  const here = hasOutput(media);
  const places = new Map<number, ResultPlace>();
  for (const task of earlier) {
    if (task.status !== 'SUCCEEDED') continue;
    if (here(task)) {
      places.set(task.id, { at: 'here' });
      continue;
    }
    const [first] = await tasks.outputs(task.id);
    // Told by the id it was saved with: another computer of this one's name is another machine (savedBy.ts).
    places.set(
      task.id,
      first && first.machine !== null && savedBy(first, media).by === 'other'
        ? { at: 'elsewhere', machine: first.machine, words: notHereWords('its result', first, 'missing', media) }
        : { at: 'gone', looked: task.outputPath === null ? [] : media.places(task.outputPath) },
    );
  }
  return places;
}

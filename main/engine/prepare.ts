import type { InputFiles } from '../media/outputLocator.ts';
import type { PreparedRequest, ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../tasks/model.ts';
import { asDataUri, replaceOutputRefs } from './outputRefs.ts';

/**
 * The request exactly as it is (or was) sent: other tasks' outputs the input names are read in as data: URIs,
 * then the adapter builds and checks it. Reconciliation rebuilds it the same way to match what the provider saw.
 */
export async function prepareRequest(task: Task, provider: ProviderAdapter, files: InputFiles): Promise<PreparedRequest> {
  const input = await replaceOutputRefs(task.input, async (id) => asDataUri(await files.input(id, `task ${id}'s result, which this ${task.kind} is made from,`)));
  return provider.prepare({ ...task, input });
}

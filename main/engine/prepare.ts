import type { PreparedRequest, ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../tasks/model.ts';
import { asDataUri, outputPathOf, replaceOutputRefs } from './outputRefs.ts';

/**
 * The request exactly as it is (or was) sent: other tasks' outputs the input names are read in as data: URIs,
 * then the adapter builds and checks it. Reconciliation rebuilds it the same way to match what the provider saw.
 */
export async function prepareRequest(task: Task, provider: ProviderAdapter, get: (id: number) => Promise<Task | undefined>): Promise<PreparedRequest> {
  const input = await replaceOutputRefs(task.input, async (id) => asDataUri(await outputPathOf(get, id)));
  return provider.prepare({ ...task, input });
}

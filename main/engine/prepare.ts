import type { InputFiles } from './outputLocator.ts';
import type { PreparedRequest, ProviderAdapter } from '../providers/port.ts';
import type { Task } from '../domain/tasks/model.ts';
import { uploadedInput, type UploadHistory } from './inputUploads.ts';
import { asDataUri, replaceOutputRefs } from './outputRefs.ts';

/**
 * The request exactly as it is (or was) sent: other tasks' outputs the input names are read in, then the adapter
 * builds and checks it. A provider that takes files by URL gets each one uploaded to its storage (`history` given),
 * so an inline image never makes the request, nor the provider's listing of it, large; any other gets data: URIs.
 * Reconciliation rebuilds it the same way, from the uploads its attempt's boundary mark keeps, to match what the
 * provider saw.
 */
export async function prepareRequest(task: Task, provider: ProviderAdapter, files: InputFiles, history?: UploadHistory): Promise<PreparedRequest> {
  // An input the provider would refuse is refused before any of its files is uploaded: with a stand-in for each.
  if (provider.upload && history?.sending) provider.prepare({ ...task, input: await replaceOutputRefs(task.input, async () => 'data:image/png;base64,', async () => 'data:image/png;base64,') });
  const inline = provider.upload && history ? await uploadedInput(task, provider as ProviderAdapter & Required<Pick<ProviderAdapter, 'upload'>>, history) : asDataUri;
  const input = await replaceOutputRefs(
    task.input,
    async (id) => inline(await files.input(id, `task ${id}'s result, which this ${task.kind} is made from,`)),
    async (ref) => inline(await files.imported(ref, `your own picture, which this ${task.kind} is made from,`)),
  );
  return provider.prepare({ ...task, input });
}

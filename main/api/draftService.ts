import { fromMicros, type Task } from '../domain/tasks/model.ts';
import { readDraftRequest } from '../domain/storyboardDraft.ts';
import { applyDraft, DraftRefused, draftProvider, estimateDraft, startDraft, type DraftEstimate } from '../pipeline/draft.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import type { Studio } from '../studio.ts';
import type { DraftEstimateView, DraftInput, DraftView } from './draftTypes.ts';

const ENDED = new Set(['SUCCEEDED', 'FAILED', 'OUTCOME_UNKNOWN', 'CANCELLED']);
/** How long a draft is waited for here; it goes on in the engine after, and asking again collects it at no charge. */
const WAIT_MS = 10 * 60_000;

function view(e: DraftEstimate): DraftEstimateView {
  return { ...e, cost: fromMicros(e.cost) };
}

/** The studio's draft steps for the app, over the engine that runs in the same process. */
export class DraftService {
  constructor(
    private readonly studio: Studio,
    private readonly providers: (id: string) => ProviderAdapter | undefined,
  ) {}

  private async estimateOf(project: string, input: DraftInput): Promise<{ e: DraftEstimate; request: ReturnType<typeof readDraftRequest> }> {
    const request = readDraftRequest(input);
    const provider = draftProvider(input.with, this.studio.settings.defaults.image.provider);
    return { e: await estimateDraft(this.studio, this.providers(provider)!, project, request, provider), request };
  }

  async estimate(project: string, input: DraftInput): Promise<DraftEstimateView> {
    return view((await this.estimateOf(project, input)).e);
  }

  /** Drafts (or uses the finished draft of the same idea), waits for it, and saves it as the storyboard's next revision. */
  async draft(project: string, input: DraftInput): Promise<DraftView> {
    const from = input.revision ?? 0;
    if (!Number.isSafeInteger(from) || from < 0) throw new DraftRefused(`revision: is the whole number of the storyboard the draft replaces (0 for none), not ${JSON.stringify(input.revision)}`);
    const { e, request } = await this.estimateOf(project, input);
    let task = await startDraft(this.studio, project, request, e, input.again === true);
    for (const end = Date.now() + WAIT_MS; !ENDED.has(task.status); ) {
      if (Date.now() > end) throw new DraftRefused(`draft task ${task.id} is still running; ask again later to put it on the storyboard, at no further charge`);
      await this.studio.clock.sleep(300);
      task = (await this.studio.tasks.get(task.id)) as Task;
    }
    if (task.status !== 'SUCCEEDED') {
      const why = task.status === 'OUTCOME_UNKNOWN' ? `its outcome is unknown; decide it in Needs attention` : (task.error ?? task.status.toLowerCase());
      throw new DraftRefused(`draft task ${task.id} did not finish: ${why}; the storyboard was left as it was`);
    }
    return { taskId: task.id, ...(await applyDraft(this.studio, project, task, from)) };
  }
}

import { InvalidInput } from '../../providers/invalidInput.ts';
import { checkModel, isProviderId, PROVIDER_IDS, validateInput } from '../../providers/registry.ts';
import { isKind, KINDS } from '../../domain/tasks/model.ts';
import { openStudio } from '../../studio.ts';
import { parseJsonInput } from '../../input/json.ts';
import { parse, required, wholeNumber } from '../args.ts';
import { UsageError } from '../errors.ts';
import type { CliContext } from '../context.ts';

/** Validates everything before writing anything: a refused enqueue leaves the database as it was. */
export async function enqueue(argv: string[], ctx: CliContext) {
  const { values } = parse(argv, {
    project: { type: 'string' },
    kind: { type: 'string' },
    provider: { type: 'string' },
    model: { type: 'string' },
    input: { type: 'string' },
    'depends-on': { type: 'string' },
    'max-attempts': { type: 'string' },
  });
  const project = required(values.project, '--project', '"My film"');
  const kind = required(values.kind, '--kind', 'image');
  if (!isKind(kind) || kind === 'render') {
    throw new UsageError(`--kind must be one of ${KINDS.filter((k) => k !== 'render').join(', ')}, not "${kind}"`);
  }
  const provider = required(values.provider, '--provider', 'simulator');
  if (!isProviderId(provider)) throw new UsageError(`unknown provider "${provider}"; the providers are ${PROVIDER_IDS.join(', ')}`);
  const model = required(values.model, '--model', 'sim-image-1');
  const inputText = required(values.input, '--input', `'{"prompt":"a red fox"}'`);
  let input: unknown;
  try {
    input = parseJsonInput(inputText, '--input');
  } catch (err) {
    throw new UsageError(`${(err as Error).message}; for example --input '{"prompt":"a red fox"}'`);
  }
  try {
    checkModel(provider, kind, model);
  } catch (err) {
    if (err instanceof InvalidInput) throw new UsageError(`--model: ${err.message}`);
    throw err;
  }
  try {
    validateInput(provider, { kind, model, input });
  } catch (err) {
    if (err instanceof InvalidInput) throw new UsageError(`--input: ${err.message}`);
    throw err;
  }
  const dependsOn = (values['depends-on'] ?? '')
    .split(',')
    .filter(Boolean)
    .map((s) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--depends-on takes task ids separated by commas, not "${s}"`);
      return n;
    });
  const maxAttempts = values['max-attempts'] === undefined ? undefined : wholeNumber(values['max-attempts'], '--max-attempts', 1, 100);

  const studio = await openStudio(ctx.dataDir, undefined, { database: ctx.database, media: ctx.media });
  try {
    for (const dep of dependsOn) {
      if (!(await studio.tasks.get(dep))) throw new UsageError(`--depends-on: there is no task ${dep}`);
    }
    const now = studio.clock.now();
    const task = await studio.store.transaction(async (tx) => {
      const p = await tx.projects.ensure(project, now);
      return tx.tasks.enqueue({ projectId: p.id, kind, provider, model, input, maxAttempts, dependsOn }, now);
    });
    ctx.out(String(task.id));
  } finally {
    await studio.close();
  }
}

import type { StepChoice, StepKind } from '../domain/storyboard.ts';
import { citation, entryFor, type CatalogueEntry, type PlanPrices } from '../pricing/catalogue.ts';
import { creditPriceOf } from '../pricing/creditPlans.ts';
import type { ModelSpec } from '../providers/models.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import { modelsOf, STEP_PROVIDER_IDS, titleOf } from '../providers/registry.ts';
import type { Field, InputSchema } from '../providers/schema.ts';
import type { FieldShape, KeySource, ModelCatalogueView, ModelView, OptionView } from './contract.ts';

/** The fields the planner fills from the scene (planner.ts); a step's options never set them. */
const FROM_SCENE: Record<StepKind, readonly string[]> = {
  image: ['prompt', 'seed'],
  clip: ['prompt', 'image_url', 'duration', 'seed'],
  speech: ['text'],
};

/** Fields that are no choice of size, length or voice: the words and the picture a step is made from. */
const NOT_TAKEN = ['prompt', 'text', 'image_url', 'seed'];

function shapeOf(f: Field): FieldShape {
  switch (f.type) {
    case 'string':
      return { type: 'string', ...(f.oneOf ? { oneOf: f.oneOf } : {}), ...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {}) };
    case 'boolean':
      return { type: 'boolean' };
    case 'object':
      return { type: 'object', fields: optionsOf(f.fields) };
    case 'either':
      return { type: 'either', of: f.of.map(shapeOf) };
    default:
      return { type: f.type, ...(f.min !== undefined ? { min: f.min } : {}), ...(f.max !== undefined ? { max: f.max } : {}) };
  }
}

function optionsOf(schema: InputSchema, leaveOut: readonly string[] = []): OptionView[] {
  return Object.entries(schema)
    .filter(([name]) => !leaveOut.includes(name))
    .map(([name, f]) => ({ name, required: f.required === true, hint: f.hint ?? null, shape: shapeOf(f) }));
}

/** A field's values in words: "1024x1024, 1536x1024", "5 to 10", "width and height". */
function values(f: Field): string {
  switch (f.type) {
    case 'string':
      return f.oneOf ? f.oneOf.join(', ') : f.maxLength !== undefined ? `text of up to ${f.maxLength.toLocaleString('en')} characters` : 'text';
    case 'boolean':
      return 'yes or no';
    case 'object':
      return Object.entries(f.fields).map(([n, x]) => `${n} ${values(x)}`).join(', ');
    case 'either':
      return f.of.map(values).join('; or ');
    default:
      if (f.min !== undefined && f.min === f.max) return String(f.min);
      if (f.min !== undefined && f.max !== undefined) return `${f.min} to ${f.max}`;
      return f.min !== undefined ? `${f.min} or more` : 'a number';
  }
}

function takes(spec: ModelSpec): string[] {
  return Object.entries(spec.inputs)
    .filter(([name]) => !NOT_TAKEN.includes(name))
    .map(([name, f]) => `${name}${f.required ? ' (required)' : ''}: ${values(f)}`)
    .concat(spec.inputs.text?.type === 'string' && spec.inputs.text.maxLength ? [`text: up to ${spec.inputs.text.maxLength.toLocaleString('en')} characters a request`] : []);
}

/** An amount as it is written in a price: no trailing zeros, and no "1.5e-05". */
const amount = (n: number) => String(Number(n.toPrecision(6)));

/** The catalogue's price of a model in words, or null where the entry gives none. */
function priceWords(entry: CatalogueEntry, plan: PlanPrices): { price: string; source: string } | null {
  const p = entry.pricing;
  const c = entry.currency;
  const source = citation(entry);
  switch (p.per) {
    case 'image':
    case 'megapixel':
    case 'second':
      return { price: `${amount(p.price)} ${c} per ${p.per}`, source };
    case 'character':
      return { price: `${amount(p.price * 1000)} ${c} per 1,000 characters`, source };
    case 'clip':
      return { price: `${amount(p.price)} ${c} for the first ${p.seconds} seconds, ${amount(p.extraSecond)} ${c} for each second beyond`, source };
    case 'credit': {
      const credit = creditPriceOf(entry.provider, plan);
      if (!credit) return null;
      return {
        price: `${amount(p.creditsPerCharacter * 1000 * credit.price)} ${credit.currency} per 1,000 characters (${p.creditsPerCharacter} credit a character at ${amount(credit.price)} ${credit.currency} a credit)`,
        source: `${source}; ${credit.source}`,
      };
    }
    case 'quality-size': {
      const cells = Object.values(p.prices).flatMap((row) => Object.values(row));
      return { price: `${amount(Math.min(...cells))} to ${amount(Math.max(...cells))} ${c} per image, by quality and size`, source };
    }
    case 'token':
      return { price: `${amount(p.input)} ${c} per million input tokens, ${amount(p.output)} ${c} per million output tokens`, source };
    case 'unknown':
      return null;
  }
}

function price(provider: string, spec: ModelSpec, adapter: ProviderAdapter | undefined, own: Record<string, number>): Pick<ModelView, 'price' | 'priceSource'> {
  const entry = entryFor(provider, spec.id, spec.kind);
  const quote = adapter?.capabilities.quote === 'endpoint' ? `; ${titleOf(provider)} is asked for a quote when a step is estimated, and that figure is used where it answers` : '';
  const words = entry && priceWords(entry, adapter?.prices ?? {});
  if (words) return { price: words.price, priceSource: `${words.source}${quote}` };
  const key = `${provider} ${spec.id}`;
  if (Object.hasOwn(own, key)) return { price: `${amount(own[key]!)} USD per request`, priceSource: `your price for ${key} (settings "prices")` };
  const why = entry?.pricing.per === 'unknown' ? entry.pricing.why : 'the catalogue has no documented price for it';
  return { price: null, priceSource: `price unknown: ${why}; set one in settings ("prices")${quote}` };
}

export interface CatalogueDeps {
  get(provider: string): ProviderAdapter | undefined;
  keySource(provider: string): KeySource;
  /** Prices the person set per "provider model" (settings "prices"). */
  own: Record<string, number>;
  defaults: Record<StepKind, StepChoice>;
}

/** Every provider the studio sends to, with the image, clip and speech models its adapter declares. */
export function modelCatalogue(deps: CatalogueDeps): ModelCatalogueView {
  const providers = STEP_PROVIDER_IDS.map((id) => ({
    id,
    title: titleOf(id),
    key: id === 'simulator' ? ('none needed' as const) : deps.keySource(id),
    models: modelsOf(id)
      .filter((m): m is ModelSpec & { kind: StepKind } => m.kind !== 'render' && m.kind !== 'draft')
      .map(
        (m): ModelView => ({
          id: m.id,
          kind: m.kind,
          title: m.title,
          ...price(id, m, deps.get(id), deps.own),
          takes: takes(m),
          options: optionsOf(m.inputs, FROM_SCENE[m.kind]),
        }),
      ),
  }));
  const pick = (c: StepChoice) => ({ provider: c.provider, model: c.model });
  return { providers, defaults: { image: pick(deps.defaults.image), clip: pick(deps.defaults.clip), speech: pick(deps.defaults.speech) } };
}

import { useId } from 'react';
import type { FieldShape, ModelCatalogueView, ModelView, OptionView, ProviderView, StepKindView } from '../../../main/api/contract.ts';
import { studio } from '../api.ts';
import { useLoad } from '../useLoad.ts';

/** A step's choice as a storyboard stores it (main/domain/storyboard.ts StepChoice). */
export interface StepChoiceDraft {
  provider: string;
  model: string;
  options?: Record<string, unknown>;
}
export type StepsDraft = Partial<Record<StepKindView, StepChoiceDraft>>;

export const STEP_KINDS: StepKindView[] = ['image', 'clip', 'speech'];
const KIND_NAMES: Record<StepKindView, string> = { image: 'Images', clip: 'Clips', speech: 'Voice' };

/** Every provider's models, prices and key status; asked again when the studio's data changes (a key added). */
export function useModels(version: number) {
  return useLoad(() => studio.listModels(), [version]);
}

const noKey = (p: ProviderView) => p.key === null || p.key === 'unreadable';

function modelOf(catalogue: ModelCatalogueView, choice: { provider: string; model: string } | undefined) {
  const provider = catalogue.providers.find((p) => p.id === choice?.provider);
  // A pinned Replicate version ("owner/name:hash") is its model's.
  const model = provider?.models.find((m) => m.id === choice?.model || m.id === choice?.model.split(':')[0]);
  return provider && model ? { provider, model } : null;
}

/** One option's input, drawn from the model's input schema; empty means the provider's own default. */
function OptionInput({ option, value, onChange, label }: { option: OptionView; value: unknown; onChange: (v: unknown) => void; label: string }) {
  const shape = option.shape;
  if (shape.type === 'either') return <EitherInput shapes={shape.of} value={value} onChange={onChange} label={label} />;
  return <ShapeInput shape={shape} value={value} onChange={onChange} label={label} required={option.required} />;
}

function ShapeInput({ shape, value, onChange, label, required }: { shape: FieldShape; value: unknown; onChange: (v: unknown) => void; label: string; required?: boolean }) {
  if (shape.type === 'string' && shape.oneOf) {
    return (
      <select aria-label={label} value={typeof value === 'string' ? value : ''} onChange={(e) => onChange(e.target.value || undefined)}>
        <option value="">{required ? 'choose…' : "the model's default"}</option>
        {shape.oneOf.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    );
  }
  if (shape.type === 'string') {
    return <input aria-label={label} value={typeof value === 'string' ? value : ''} placeholder={required ? 'required' : "the model's default"} onChange={(e) => onChange(e.target.value || undefined)} />;
  }
  if (shape.type === 'boolean') {
    return (
      <select aria-label={label} value={value === true ? 'yes' : value === false ? 'no' : ''} onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value === 'yes')}>
        <option value="">the model's default</option>
        <option value="yes">yes</option>
        <option value="no">no</option>
      </select>
    );
  }
  if (shape.type === 'object') {
    const obj = value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
    return (
      <span className="option-object">
        {shape.fields.map((f) => (
          <OptionInput key={f.name} option={f} label={`${label} ${f.name}`} value={obj[f.name]} onChange={(v) => onChange({ ...obj, [f.name]: v })} />
        ))}
      </span>
    );
  }
  if (shape.type === 'either') return <EitherInput shapes={shape.of} value={value} onChange={onChange} label={label} />;
  return (
    <input
      type="number"
      aria-label={label}
      min={shape.min}
      max={shape.max}
      step={shape.type === 'integer' ? 1 : 'any'}
      value={typeof value === 'number' ? value : ''}
      placeholder={shape.min !== undefined && shape.max !== undefined ? `${shape.min}–${shape.max}` : "the model's default"}
      onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
    />
  );
}

/** One of several shapes (fal's image_size: a named size, or a width and height): pick the shape, then its value. */
function EitherInput({ shapes, value, onChange, label }: { shapes: FieldShape[]; value: unknown; onChange: (v: unknown) => void; label: string }) {
  const current = Math.max(
    0,
    shapes.findIndex((s) => (s.type === 'object' ? !!value && typeof value === 'object' : s.type === 'string' ? typeof value === 'string' : typeof value === 'number')),
  );
  const shapeName = (s: FieldShape) => (s.type === 'object' ? s.fields.map((f) => f.name).join(' and ') : s.type === 'string' && s.oneOf ? 'named' : s.type);
  return (
    <span className="option-either">
      {shapes.length > 1 && (
        <select aria-label={`${label} form`} value={current} onChange={(e) => onChange(shapes[Number(e.target.value)]!.type === 'object' ? {} : undefined)}>
          {shapes.map((s, i) => (
            <option key={i} value={i}>
              {shapeName(s)}
            </option>
          ))}
        </select>
      )}
      <ShapeInput shape={shapes[current]!} value={value} onChange={onChange} label={label} />
    </span>
  );
}

/** The chosen model's price, where the figure comes from, and what it takes. */
export function ModelFacts({ provider, model }: { provider: ProviderView; model: ModelView }) {
  return (
    <div className="model-facts" data-testid="model-facts">
      {noKey(provider) && (
        <p className="warning" data-testid="needs-key">
          {provider.title} has no key: add a key in Settings.
        </p>
      )}
      <p>
        <strong>{model.price ?? 'price unknown'}</strong> <small className="note">{model.priceSource}</small>
      </p>
      {model.takes.length > 0 && <p className="note">Takes: {model.takes.join(' · ')}</p>}
    </div>
  );
}

/**
 * The provider and model of one kind of step, with the model's options. `inherited` names what applies when
 * nothing is chosen here (the project's default for a scene, the studio's default for the project).
 */
function StepChoiceInput({
  kind,
  catalogue,
  value,
  onChange,
  inherited,
  scope,
}: {
  kind: StepKindView;
  catalogue: ModelCatalogueView;
  value: StepChoiceDraft | undefined;
  onChange: (v: StepChoiceDraft | undefined) => void;
  inherited: string;
  scope: string;
}) {
  const id = useId();
  const chosen = modelOf(catalogue, value);
  const options = value?.options ?? {};
  const setOption = (name: string, v: unknown) => {
    const next = { ...options, [name]: v };
    if (v === undefined || (v && typeof v === 'object' && Object.values(v).every((x) => x === undefined))) delete next[name];
    onChange({ ...value!, options: Object.keys(next).length ? next : undefined });
  };
  return (
    <div className="step-choice" data-testid={`${scope}-${kind}`}>
      <label htmlFor={id}>{KIND_NAMES[kind]}</label>
      <select
        id={id}
        aria-label={`${KIND_NAMES[kind]} model for ${scope}`}
        value={value ? `${value.provider}|${value.model}` : ''}
        onChange={(e) => {
          if (!e.target.value) return onChange(undefined);
          const [provider, model] = e.target.value.split('|') as [string, string];
          // Options belong to a model; another model starts from its own defaults.
          onChange({ provider, model });
        }}
      >
        <option value="">{inherited}</option>
        {value && !chosen && <option value={`${value.provider}|${value.model}`}>{`${value.provider} ${value.model}`}</option>}
        {catalogue.providers.map((p) => {
          const models = p.models.filter((m) => m.kind === kind);
          if (models.length === 0) return null;
          return (
            <optgroup key={p.id} label={noKey(p) ? `${p.title} (add a key in Settings)` : p.title}>
              {models.map((m) => (
                <option key={m.id} value={`${p.id}|${m.id}`}>
                  {`${p.title}: ${m.title} (${m.price ?? 'price unknown'})${noKey(p) ? ', add a key in Settings' : ''}`}
                </option>
              ))}
            </optgroup>
          );
        })}
      </select>
      {chosen && (
        <>
          <ModelFacts provider={chosen.provider} model={chosen.model} />
          {chosen.model.options.length > 0 && (
            <div className="options">
              {chosen.model.options.map((o) => (
                <label key={o.name} title={o.hint ?? undefined}>
                  {o.name}
                  {o.required ? ' (required)' : ''}
                  <OptionInput option={o} value={options[o.name]} onChange={(v) => setOption(o.name, v)} label={`${KIND_NAMES[kind]} ${o.name} for ${scope}`} />
                </label>
              ))}
            </div>
          )}
        </>
      )}
    </div>
  );
}

const describe = (c: { provider: string; model: string } | undefined) => (c ? `${c.provider} ${c.model}` : '');

/** A step choice per kind: the project's defaults (`parent` absent), or a scene's overrides of them. */
export function StepChoices({
  catalogue,
  value,
  onChange,
  parent,
  scope,
}: {
  catalogue: ModelCatalogueView;
  value: StepsDraft | undefined;
  onChange: (v: StepsDraft) => void;
  parent?: StepsDraft;
  scope: string;
}) {
  return (
    <div className="step-choices">
      {STEP_KINDS.map((kind) => {
        const fallback = parent?.[kind] ?? catalogue.defaults[kind];
        const inherited = parent ? `Project default (${describe(fallback)})` : `Studio default (${describe(catalogue.defaults[kind])})`;
        return (
          <StepChoiceInput
            key={kind}
            kind={kind}
            catalogue={catalogue}
            value={value?.[kind]}
            inherited={inherited}
            scope={scope}
            onChange={(v) => {
              const next = { ...value };
              if (v) next[kind] = v;
              else delete next[kind];
              onChange(next);
            }}
          />
        );
      })}
    </div>
  );
}

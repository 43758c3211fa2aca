/** The model catalogue of the StudioApi (contract.ts); types only, as the renderer reads them. */

import type { KeySource } from './settingsTypes.ts';

/** One input field of a model, as the studio's input schema declares it, for the UI to draw an input for. */
export type FieldShape =
  | { type: 'string'; oneOf?: readonly string[]; maxLength?: number }
  | { type: 'number' | 'integer'; min?: number; max?: number }
  | { type: 'boolean' }
  | { type: 'object'; fields: OptionView[] }
  | { type: 'either'; of: FieldShape[] };

export interface OptionView {
  name: string;
  required: boolean;
  hint: string | null;
  shape: FieldShape;
}

export type StepKindView = 'image' | 'clip' | 'speech';

export interface ModelView {
  id: string;
  kind: StepKindView;
  title: string;
  /** The price in words ("0.025 USD per megapixel"), or null where no price is known. */
  price: string | null;
  /** Where the price comes from (the catalogue's page and date, your own price), or why it is unknown. */
  priceSource: string;
  /** What it takes, in words, from its input schema: "size: 1024x1024, 1536x1024", "voice: alloy, ash". */
  takes: string[];
  /** The inputs a storyboard step may set for it (stored in the step's `options`); prompt, text and seed come from the scene. */
  options: OptionView[];
}

export interface ProviderView {
  id: string;
  title: string;
  /** Where its key comes from; null: it has none yet ("add a key in Settings"). 'none needed' for the simulator. */
  key: KeySource | 'none needed';
  models: ModelView[];
}

export interface ModelCatalogueView {
  providers: ProviderView[];
  /** What a step uses when neither the project nor the scene chooses (settings "defaults"). */
  defaults: Record<StepKindView, { provider: string; model: string }>;
}

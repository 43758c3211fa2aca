/** What the pipeline is built with, and what a person may ask of one Generate. */
import type { Preset } from '../domain/presets.ts';
import type { OwnPrices } from '../engine/estimator.ts';
import type { ProviderAdapter } from '../providers/port.ts';
import type { StepChoice, StepKind } from '../domain/storyboard.ts';
import type { Studio } from '../studio.ts';
import type { TakeChoice } from './newTakes.ts';

export interface PipelineDeps {
  studio: Studio;
  /** Adapters, used only to validate inputs and ask for quotes; nothing is sent from here. */
  provider: (id: string) => ProviderAdapter | undefined;
  defaults: Record<StepKind, StepChoice>;
  /** Prices the person set for models with no documented one, per request (settings "prices"). */
  prices?: () => OwnPrices;
  /** False: steps are priced without the same model's offers elsewhere (a plan priced only for its total, moveSavings.ts). */
  offers?: boolean;
}

export interface GenerateOptions {
  newTakes?: string[];
  /** What the new takes make again (both steps unless it says), and their seed when the person gave one. */
  take?: TakeChoice;
  /** Render again even when an identical render exists. */
  freshRender?: boolean;
  /** The person confirmed buying again the steps whose paid result was lost. */
  rebuyLost?: boolean;
  /** The person confirmed, for a budgeted project, the steps whose price is unknown. */
  confirmUnpriced?: boolean;
  /** Only a render, of each scene's picked take; a scene with no take yet is made from the storyboard, if all of it exists. */
  renderOnly?: boolean;
  /** With renderOnly: the film exported in another shape or format (see presets.ts). */
  preset?: Preset;
}

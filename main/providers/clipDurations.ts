import { isKling } from './frameSizes.ts';

/**
 * Kling's durations, as strings: `duration` is "5" or "10" (fal-js libs/client/src/types/endpoints.ts,
 * KlingVideoV2MasterImageToVideoInput, which v2.1 standard's input is; and the input schema on
 * fal.ai/models/fal-ai/kling-video/v2.1/standard/image-to-video/llms.txt). Ten seconds is its longest.
 */
export const KLING_DURATIONS = ['5', '10'] as const;

/** The simulator makes a clip of any length from half a second to this many seconds (its clip input schema). */
export const SIMULATOR_CLIP_MAX_SEC = 30;

/** The shortest of Kling's durations that covers `seconds`, or its longest. */
export const klingDuration = (seconds: number) => KLING_DURATIONS.find((d) => Number(d) >= seconds) ?? KLING_DURATIONS.at(-1)!;

/**
 * The duration a clip model is asked for so its clip covers `seconds`: rounded up to the lengths it makes, so
 * a small change to what it must cover seldom changes what is asked (and bought), and capped at its longest.
 * Kling makes 5 or 10 seconds; the simulator, any length up to its maximum, asked here in whole seconds; any
 * other model, whole seconds.
 */
export function clipSecondsToAsk(provider: string, model: string, seconds: number): number {
  if (isKling(provider, model)) return Number(klingDuration(seconds));
  const whole = Math.ceil(seconds - 1e-9);
  return provider === 'simulator' ? Math.min(whole, SIMULATOR_CLIP_MAX_SEC) : whole;
}

/**
 * The longer lengths a clip model makes than `seconds`, shortest first: a clip bought at one of them (for a longer
 * narration, since shortened) covers a scene that needs `seconds`, so it is reused rather than bought again.
 */
export function longerClipSeconds(provider: string, model: string, seconds: number): number[] {
  if (isKling(provider, model)) return KLING_DURATIONS.map(Number).filter((d) => d > seconds);
  if (provider !== 'simulator') return [];
  return Array.from({ length: Math.max(0, SIMULATOR_CLIP_MAX_SEC - Math.floor(seconds)) }, (_, i) => Math.floor(seconds) + 1 + i);
}

/** How long a clip asked for `duration` (seconds, or Kling's own "5" or "10") lasts. */
export function clipSecondsMade(provider: string, model: string, duration: number | string): number {
  const seconds = Number(duration);
  return isKling(provider, model) ? Number(klingDuration(seconds)) : seconds;
}

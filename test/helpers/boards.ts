/** A two-scene storyboard at a tiny size and one second a scene, so its takes and renders are quick to make. */
export const TWO_SCENES = {
  width: 320,
  height: 180,
  fps: 24,
  scenes: [
    { id: 'dawn', imagePrompt: 'a fox asleep in snow', motionPrompt: 'push in', narration: 'At dawn, the fox wakes.', duration: 1 },
    { id: 'home', imagePrompt: 'the fox going home', motionPrompt: 'track', duration: 1 },
  ],
};

/** Two silent one-second scenes at a tiny size, for the app's own-picture and own-clip flows. */
export const DAWN_DUSK = {
  width: 320,
  height: 180,
  scenes: [
    { id: 'dawn', imagePrompt: 'a red fox asleep in snow', motionPrompt: 'push in', duration: 1 },
    { id: 'dusk', imagePrompt: 'the fox walks home', motionPrompt: 'pan left', duration: 1 },
  ],
};

/** Two scenes of FLUX.1 [dev] at fal in a square frame, which Replicate's "1:1" makes at exactly the same 1024x1024. */
export const FAL_DEV_SQUARE = {
  width: 1024,
  height: 1024,
  steps: { image: { provider: 'fal', model: 'fal-ai/flux/dev' }, clip: { provider: 'simulator', model: 'sim-clip-1' } },
  scenes: [
    { id: 'dawn', imagePrompt: 'a red fox asleep in snow', duration: 2 },
    { id: 'dusk', imagePrompt: 'a red fox under the moon', duration: 2 },
  ],
};

/** Three scenes of a lighthouse keeper's evening, two narrated, at a given size and length a scene. */
export function lighthouse(width: number, height: number, fps: number, duration: number) {
  return {
    width,
    height,
    fps,
    scenes: [
      { id: 'dawn', imagePrompt: 'a lighthouse at dawn', motionPrompt: 'slow push in', narration: 'At dawn, the keeper climbs the stairs.', duration },
      { id: 'sea', imagePrompt: 'a rowing boat on a calm sea', motionPrompt: 'track', narration: 'Out at sea, a small boat waits.', duration },
      { id: 'home', imagePrompt: 'a harbour at dusk', motionPrompt: 'pan left', duration },
    ],
  };
}

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

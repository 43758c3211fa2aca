/**
 * The simulator's storyboard draft, made offline from the idea's own sentences: each scene takes its share of them
 * in order, so the draft reads as the idea told in pictures. It answers in the shape the real draft does
 * ({"scenes": [{imagePrompt, motionPrompt, narration, duration}]}, main/domain/storyboardDraft.ts).
 */
const MOVES = ['Slow push in', 'Gentle pan from left to right', 'Camera holds, light drifts', 'Slow pull back', 'Low tracking shot', 'Soft tilt up'];

function sentences(idea: string): string[] {
  const found = idea.replace(/\s+/g, ' ').trim().match(/[^.!?]+[.!?]*/g) ?? [];
  return found.map((s) => s.trim()).filter((s) => s.length > 0);
}

/** The sentences shared out over `n` scenes in order; with fewer sentences than scenes, the last ones are seen again closer. */
function shares(parts: string[], n: number): string[] {
  if (parts.length === 0) return Array.from({ length: n }, (_, i) => `Scene ${i + 1}`);
  return Array.from({ length: n }, (_, i) => {
    const from = Math.floor((i * parts.length) / n);
    const to = Math.max(from + 1, Math.floor(((i + 1) * parts.length) / n));
    return parts.slice(from, to).join(' ');
  });
}

export function simulatedDraft(idea: string, scenes: number): { scenes: { imagePrompt: string; motionPrompt: string; narration: string; duration: number }[] } {
  const said = shares(sentences(idea), scenes);
  return {
    scenes: said.map((text, i) => {
      const words = text.split(' ').length;
      const still = text.replace(/[.!?]+$/, '');
      return {
        imagePrompt: `${still}, cinematic still, soft natural light`,
        motionPrompt: `${MOVES[i % MOVES.length]}: ${still.toLowerCase()}`,
        narration: text,
        // About two and a half words a second of narration, a second of air, within what a clip model makes.
        duration: Math.min(10, Math.max(2, Math.round(words / 2.5 + 1))),
      };
    }),
  };
}

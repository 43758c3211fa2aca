import { describe, expect, it } from 'vitest';
import { DEFAULT_LOUDNESS_LUFS, MUSIC_UNDER_VOICE_LU, TRANSITION_TYPES } from '../main/domain/finishing.ts';
import { readStoryboard } from '../main/domain/storyboard.ts';
import {
  burnsSubtitles,
  CUT_TYPES,
  filmCut,
  LOUDNESS,
  loudnessOf,
  MUSIC_VOLUME,
  musicVolumeOf,
  sceneCut,
  setBurn,
  setFilmCut,
  setLoudness,
  setMusic,
  setMusicVolume,
  setSceneCut,
  type FinishingDraft,
} from '../renderer/src/views/finishingDraft.ts';

const board = () => ({
  width: 320,
  height: 180,
  fps: 12,
  scenes: [
    { id: 'dawn', imagePrompt: 'a fox asleep', narration: 'At dawn, the fox wakes.', duration: 2 },
    { id: 'hunt', imagePrompt: 'the fox listens', duration: 2 },
    { id: 'home', imagePrompt: 'the fox goes home', duration: 2 },
  ],
});

const MUSIC = { file: '/films/fox/own-bed.m4a', sha256: 'a'.repeat(64), name: 'bed.m4a' };

/** The finishing as the editor shows it: what must read the same from the draft and from what the studio stored. */
const shown = (b: FinishingDraft) => ({
  cut: filmCut(b),
  scenes: b.scenes.map(sceneCut),
  burn: burnsSubtitles(b),
  music: b.music ? { ...b.music, volume: musicVolumeOf(b.music) } : null,
  loudness: loudnessOf(b),
});

/** Edits a fresh draft, then checks the studio's parser takes it and reads back what the editor shows. */
function roundTrip(change: (b: FinishingDraft) => void): { draft: FinishingDraft; stored: FinishingDraft } {
  const draft = board() as FinishingDraft;
  change(draft);
  const stored = JSON.parse(JSON.stringify(readStoryboard(draft))) as FinishingDraft;
  expect(shown(stored)).toEqual(shown(draft));
  // What the studio stored, edited no further, is taken again as it is.
  expect(JSON.parse(JSON.stringify(readStoryboard(stored)))).toEqual(stored);
  return { draft, stored };
}

describe('the Finishing section writes the storyboard as the studio reads it', () => {
  it('holds the studio\'s own defaults and kinds of cut', () => {
    expect(LOUDNESS.default).toBe(DEFAULT_LOUDNESS_LUFS);
    expect(MUSIC_VOLUME.default).toBe(MUSIC_UNDER_VOICE_LU);
    expect(CUT_TYPES).toEqual([...TRANSITION_TYPES]);
  });

  it('writes nothing for a value left at, or set back to, its default', () => {
    const untouched = JSON.stringify(board());
    const { draft } = roundTrip((b) => {
      setFilmCut(b, 'crossfade', 0.8);
      setFilmCut(b, 'cut', 0.8);
      setBurn(b, true);
      setBurn(b, false);
      setLoudness(b, -20);
      setLoudness(b, -14);
      setSceneCut(b, 0, 'fade-black');
      setSceneCut(b, 0, 'film');
      setMusic(b, MUSIC);
      setMusicVolume(b, -20);
      setMusicVolume(b, -12);
      setMusic(b, null);
    });
    expect(JSON.stringify(draft)).toBe(untouched);
    // Nothing typed in a number field is its default.
    const cleared = board() as FinishingDraft;
    setLoudness(cleared, -20);
    setLoudness(cleared, null);
    expect(JSON.stringify(cleared)).toBe(untouched);
  });

  it('a crossfade, burned subtitles, music with its name and level, a loudness and a scene\'s own cut round-trip', () => {
    const { draft, stored } = roundTrip((b) => {
      setFilmCut(b, 'crossfade', 0.5);
      setFilmCut(b, 'crossfade', 0.8);
      setBurn(b, true);
      setMusic(b, MUSIC);
      setMusicVolume(b, -18);
      setLoudness(b, -16);
      setSceneCut(b, 1, 'fade-black');
    });
    expect(draft).toMatchObject({ transition: { type: 'crossfade', duration: 0.8 }, subtitles: { burn: true }, music: { ...MUSIC, volume: -18 }, loudness: -16 });
    // A scene's own fade takes the film's seconds; the others follow the film.
    expect(draft.scenes.map((s) => s.transition ?? null)).toEqual([null, { type: 'fade-black', duration: 0.8 }, null]);
    expect(stored.music).toEqual({ ...MUSIC, volume: -18 });

    // Other music keeps the level set; a scene's plain cut has no seconds.
    const again = structuredClone(stored);
    setMusic(again, { ...MUSIC, sha256: 'b'.repeat(64), name: 'other.mp3' });
    setSceneCut(again, 0, 'cut');
    expect(again.music).toEqual({ ...MUSIC, sha256: 'b'.repeat(64), name: 'other.mp3', volume: -18 });
    expect(again.scenes[0]!.transition).toEqual({ type: 'cut' });
    expect(shown(JSON.parse(JSON.stringify(readStoryboard(again))) as FinishingDraft)).toEqual(shown(again));
  });

  it('shows what the studio stored for a file written by hand: a fade with no seconds, a cut with none, music at its default level', () => {
    const stored = JSON.parse(
      JSON.stringify(readStoryboard({ ...board(), transition: { type: 'fade-black' }, music: { file: '/films/fox/bed.wav' }, scenes: board().scenes.map((s, i) => (i === 0 ? { ...s, transition: { type: 'cut' } } : s)) })),
    ) as FinishingDraft;
    expect(shown(stored)).toEqual({
      cut: { type: 'fade-black', seconds: 0.5 },
      scenes: [{ type: 'cut', seconds: 0.5 }, 'film', 'film'],
      burn: false,
      music: { file: '/films/fox/bed.wav', volume: -12 },
      loudness: -14,
    });
  });
});

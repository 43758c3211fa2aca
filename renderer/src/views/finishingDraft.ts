/**
 * The storyboard's finishing as the editor keeps it in its draft, written as the studio reads it
 * (main/domain/finishing.ts): a value left at its default is not written at all, since the studio takes a field
 * that is absent as its default, so a storyboard nobody finished is saved exactly as it was.
 */
export type CutType = 'cut' | 'crossfade' | 'fade-black';

/** A cut as the storyboard writes it: a plain cut has no length. */
export interface CutDraft {
  type: CutType;
  duration?: number;
}

/** The music bed: a file (the project's copy, with the name it was sent under) or a finished audio task. */
export type MusicDraft = ({ file: string; sha256?: string; name?: string } | { task: number }) & { volume?: number };

export interface FinishingDraft {
  transition?: CutDraft;
  subtitles?: { burn: boolean };
  music?: MusicDraft;
  loudness?: number;
  scenes: { transition?: CutDraft }[];
}

/** The studio's defaults and limits (main/domain/finishing.ts), which a test holds equal to these. */
export const LOUDNESS = { default: -14, min: -30, max: -9 };
export const MUSIC_VOLUME = { default: -12, min: -40, max: 0 };
export const CUT_SECONDS = { default: 0.5, min: 0.1, max: 2 };

export const CUT_WORDS: Record<CutType, string> = { cut: 'Plain cut', crossfade: 'Crossfade', 'fade-black': 'Fade through black' };
export const CUT_TYPES = Object.keys(CUT_WORDS) as CutType[];

/** A cut as the editor shows it: its kind and, for a crossfade or a fade, its seconds. */
export interface CutShown {
  type: CutType;
  seconds: number;
}

/** The film's cut between scenes, a plain one when none is written. */
export function filmCut(board: FinishingDraft): CutShown {
  return shown(board.transition);
}

function shown(cut: CutDraft | undefined): CutShown {
  const type = cut?.type ?? 'cut';
  return { type, seconds: type !== 'cut' && typeof cut?.duration === 'number' && cut.duration > 0 ? cut.duration : CUT_SECONDS.default };
}

const written = (type: CutType, seconds: number): CutDraft => (type === 'cut' ? { type } : { type, duration: seconds });

/** Sets the film's cut between scenes; a plain cut, the default, is not written. */
export function setFilmCut(board: FinishingDraft, type: CutType, seconds: number): void {
  if (type === 'cut') delete board.transition;
  else board.transition = written(type, seconds);
}

/** What a scene's "then" says: "film" when it follows the film's cut, else its own. */
export function sceneCut(scene: { transition?: CutDraft }): CutShown | 'film' {
  return scene.transition ? shown(scene.transition) : 'film';
}

/**
 * Sets the cut from a scene to the next: "film" removes the scene's own. A crossfade or a fade keeps the seconds the
 * scene had, else takes the film's.
 */
export function setSceneCut(board: FinishingDraft, scene: number, choice: CutType | 'film'): void {
  const s = board.scenes[scene]!;
  if (choice === 'film') {
    delete s.transition;
    return;
  }
  const had = s.transition && s.transition.type !== 'cut' ? shown(s.transition).seconds : filmCut(board).seconds;
  s.transition = written(choice, had);
}

export const burnsSubtitles = (board: FinishingDraft) => board.subtitles?.burn === true;

/** Burned in or not; not burned, the default, is not written. */
export function setBurn(board: FinishingDraft, burn: boolean): void {
  if (burn) board.subtitles = { burn: true };
  else delete board.subtitles;
}

export const loudnessOf = (board: FinishingDraft) => board.loudness ?? LOUDNESS.default;

/** The loudness target; the default (or nothing typed) is not written. */
export function setLoudness(board: FinishingDraft, lufs: number | null): void {
  if (lufs === null || lufs === LOUDNESS.default) delete board.loudness;
  else board.loudness = lufs;
}

export const musicVolumeOf = (music: MusicDraft) => music.volume ?? MUSIC_VOLUME.default;

/** Music from a file sent in its place, keeping the level set for the music before; null: no music. */
export function setMusic(board: FinishingDraft, music: { file: string; sha256: string; name: string } | null): void {
  if (!music) {
    delete board.music;
    return;
  }
  const volume = board.music?.volume;
  board.music = { ...music, ...(volume === undefined || volume === MUSIC_VOLUME.default ? {} : { volume }) };
}

/** The music's level under the voice, in LU; the default (or nothing typed) is not written. */
export function setMusicVolume(board: FinishingDraft, lu: number | null): void {
  if (!board.music) return;
  if (lu === null || lu === MUSIC_VOLUME.default) delete board.music.volume;
  else board.music.volume = lu;
}

/** The music's name, as the person knows it. */
export function musicWords(music: MusicDraft): string {
  if ('task' in music) return `the sound of task ${music.task}`;
  return music.name ?? music.file.split(/[\\/]/).pop()!;
}

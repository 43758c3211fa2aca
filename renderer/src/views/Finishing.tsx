import { useEffect, useRef, useState } from 'react';
import { ownPictureSrc, sendMusic } from '../api.ts';
import {
  burnsSubtitles,
  CUT_SECONDS,
  CUT_TYPES,
  CUT_WORDS,
  filmCut,
  LOUDNESS,
  loudnessOf,
  MUSIC_VOLUME,
  musicVolumeOf,
  musicWords,
  sceneCut,
  setBurn,
  setFilmCut,
  setLoudness,
  setMusic,
  setMusicVolume,
  setSceneCut,
  type CutType,
  type FinishingDraft,
} from './finishingDraft.ts';

type Change = (change: (board: FinishingDraft) => void) => void;

/** What the app may send as music: the studio takes these by their extension (main/pipeline/ownMusic.ts). */
const MUSIC_ACCEPT = 'audio/*,.mp3,.m4a,.aac,.wav,.flac,.ogg,.opus';

/**
 * A number typed in a field: committed as it is typed whenever it reads as a number (the studio names a value out of
 * range at Save), and, left empty or unreadable, given back as null when the field is left, for the default.
 */
function NumberField(props: { label: string; value: number; min: number; max: number; step: number; unit: string; onCommit: (n: number | null) => void }) {
  const { value, onCommit } = props;
  const [text, setText] = useState(String(value));
  useEffect(() => {
    if (text.trim() === '' || Number(text) !== value) setText(String(value));
  }, [value]);
  return (
    <label className="number-field">
      <input
        type="number"
        aria-label={props.label}
        min={props.min}
        max={props.max}
        step={props.step}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() !== '' && Number.isFinite(Number(e.target.value))) onCommit(Number(e.target.value));
        }}
        onBlur={() => {
          if (text.trim() === '' || !Number.isFinite(Number(text))) {
            onCommit(null);
            setText(String(value));
          }
        }}
      />
      <span className="unit">{props.unit}</span>
    </label>
  );
}

/** A cut's words in a sentence: "crossfade", "plain cut". */
const lower = (type: CutType) => CUT_WORDS[type].toLowerCase();

/**
 * The cut from one scene to the next, in the scene's head: the film's (as the Finishing section sets it) or its own.
 * The last scene has none: nothing follows it.
 */
export function SceneCut({ board, index, id, onChange }: { board: FinishingDraft; index: number; id: string; onChange: Change }) {
  if (index >= board.scenes.length - 1) return null;
  const own = sceneCut(board.scenes[index]!);
  const film = filmCut(board);
  return (
    <label className="scene-cut" title="How this scene goes to the next one">
      then
      <select aria-label={`Cut after ${id}`} value={own === 'film' ? 'film' : own.type} onChange={(e) => onChange((d) => setSceneCut(d, index, e.target.value as CutType | 'film'))}>
        <option value="film">as the film ({lower(film.type)})</option>
        {CUT_TYPES.map((type) => (
          <option key={type} value={type}>
            {lower(type)}
            {own !== 'film' && own.type === type && type !== 'cut' ? `, ${own.seconds} s` : ''}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The music bed: the file sent for it, played here, its level under the voice, and a way to send another or none. */
function MusicChoice({ project, board, onChange }: { project: string; board: FinishingDraft; onChange: Change }) {
  const picker = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const music = board.music;
  const take = async (file: File) => {
    setBusy(true);
    setError(null);
    try {
      const sent = await sendMusic(project, file);
      onChange((d) => setMusic(d, sent.music));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const src = music && 'sha256' in music && music.sha256 ? ownPictureSrc(project, music.sha256) : null;
  return (
    <div className="music-choice" data-testid="music">
      {music && (
        <div className="row music-chosen">
          <span className="music-name" data-testid="music-name">
            ♪ {musicWords(music)}
          </span>
          {src && <audio controls preload="none" src={src} aria-label={`Play ${musicWords(music)}`} />}
        </div>
      )}
      {music && (
        <div className="row">
          <NumberField
            label="Music level under the voice"
            value={musicVolumeOf(music)}
            min={MUSIC_VOLUME.min}
            max={MUSIC_VOLUME.max}
            step={1}
            unit="LU under the voice"
            onCommit={(n) => onChange((d) => setMusicVolume(d, n))}
          />
          <small className="dim">and lower still while someone speaks</small>
        </div>
      )}
      <div className="row">
        <button disabled={busy} onClick={() => picker.current?.click()}>
          {busy ? 'Sending…' : music ? 'Other music…' : 'Add music…'}
        </button>
        {music && (
          <button disabled={busy} onClick={() => onChange((d) => setMusic(d, null))}>
            No music
          </button>
        )}
        <input
          ref={picker}
          type="file"
          accept={MUSIC_ACCEPT}
          aria-label="Music file"
          hidden
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) void take(file);
          }}
        />
        {!music && <small className="dim">MP3, M4A, AAC, WAV, FLAC, OGG or Opus; looped or cut to the film&apos;s length, faded in and out</small>}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/**
 * How the film is finished around its scenes: the cut between them, subtitles burned in or not, a music bed under the
 * voice and the loudness of the mix. None of it is bought: changing it renders the film again.
 */
export function Finishing({ project, board, onChange }: { project: string; board: FinishingDraft; onChange: Change }) {
  const cut = filmCut(board);
  return (
    <section className="finishing" aria-labelledby="finishing-title" data-testid="finishing">
      <h3 id="finishing-title">Finishing</h3>
      <p className="note">How the scenes are joined and the film is finished. Changing any of it renders the film again and buys nothing.</p>
      <div className="finishing-grid">
        <span className="finishing-label">Between scenes</span>
        <div>
          <div className="row">
            <select aria-label="Cut between scenes" value={cut.type} onChange={(e) => onChange((d) => setFilmCut(d, e.target.value as CutType, cut.seconds))}>
              {CUT_TYPES.map((type) => (
                <option key={type} value={type}>
                  {CUT_WORDS[type]}
                </option>
              ))}
            </select>
            {cut.type !== 'cut' && (
              <NumberField label="Seconds of each cut" value={cut.seconds} min={CUT_SECONDS.min} max={CUT_SECONDS.max} step={0.1} unit="s" onCommit={(n) => n !== null && onChange((d) => setFilmCut(d, cut.type, n))} />
            )}
          </div>
          <small className="dim">
            {cut.type === 'crossfade' ? 'The next scene shows through, so the film is that much shorter. ' : cut.type === 'fade-black' ? 'Half the time fading out, half fading in. ' : ''}A scene can
            have its own: &ldquo;then&rdquo; at the top of the scene.
          </small>
        </div>

        <span className="finishing-label">Subtitles</span>
        <div>
          <label className="check">
            <input type="checkbox" checked={burnsSubtitles(board)} onChange={(e) => onChange((d) => setBurn(d, e.target.checked))} /> Burn them into the picture
          </label>
          <small className="dim">Made from the narration, they are always written beside the film (.srt and .vtt) and carried in it as a track viewers can turn on.</small>
        </div>

        <span className="finishing-label">Music</span>
        <MusicChoice project={project} board={board} onChange={onChange} />

        <span className="finishing-label">Loudness</span>
        <div>
          <NumberField label="Loudness target" value={loudnessOf(board)} min={LOUDNESS.min} max={LOUDNESS.max} step={1} unit="LUFS" onCommit={(n) => onChange((d) => setLoudness(d, n))} />
          <small className="dim">How loud the finished film plays, voice and music together; {LOUDNESS.default} suits most video sites, and a higher number is louder.</small>
        </div>
      </div>
    </section>
  );
}

import { useRef, useState } from 'react';
import { ownPictureSrc, sendPicture, taskMediaSrc, type SentPicture } from '../api.ts';

/** A scene's own still or clip as the storyboard names it (main/domain/storyboard.ts OwnMedia). */
export type OwnMediaDraft = { file: string; sha256?: string; name?: string } | { task: number } | { take: number; scene?: string };

/** Where the app can show a scene's own still or clip, when it can: the project's copy by its checksum, or a task's result. */
export function ownSrc(project: string, own: OwnMediaDraft): string | null {
  if ('sha256' in own && own.sha256) return ownPictureSrc(project, own.sha256);
  if ('task' in own) return taskMediaSrc(own.task);
  return null;
}

/** In words: where a scene's own still or clip comes from. */
export function ownWords(own: OwnMediaDraft): string {
  if ('file' in own) return own.name ?? own.file.split(/[\\/]/).pop()!;
  if ('task' in own) return `task ${own.task}`;
  return `take ${own.take}${own.scene ? ` of ${own.scene}` : ''}`;
}

/**
 * A scene's own picture or clip: a still shown, marked "yours" (a clip is shown in the scene's preview), with a way to
 * send one from this computer (a file picker here; a drop on the scene does the same) and to go back to a bought
 * one. `onPick` sets the scene's image or clip, by what was sent, and saves the storyboard.
 */
export function OwnPicture(props: {
  project: string;
  scene: string;
  image: OwnMediaDraft | undefined;
  clip: OwnMediaDraft | undefined;
  busy: boolean;
  error: string | null;
  onPick: (file: File) => void;
  onRemove: () => void;
}) {
  const { project, scene, image, clip } = props;
  const src = image ? ownSrc(project, image) : null;
  const picker = useRef<HTMLInputElement>(null);
  return (
    <div className="own-picture" data-testid={`own-${scene}`}>
      {image && (
        <figure className="own-still">
          {src ? <img src={src} alt={`your picture for ${scene}`} /> : <div className="preview-empty">{ownWords(image)}</div>}
          <figcaption>
            <span className="yours-mark">yours</span> {ownWords(image)}: nothing is bought for this scene's image
          </figcaption>
        </figure>
      )}
      {clip && (
        <p className="own-clip">
          <span className="yours-mark">yours</span> clip: {ownWords(clip)}; nothing is bought for this scene's image or clip
        </p>
      )}
      <div className="row">
        <button disabled={props.busy} onClick={() => picker.current?.click()}>
          {props.busy ? 'Sending…' : image || clip ? 'Use another picture or clip of yours' : 'Use your own picture or clip'}
        </button>
        <input
          ref={picker}
          type="file"
          accept="image/png,image/jpeg,image/webp,video/mp4,video/quicktime,video/webm,.mp4,.mov,.m4v,.webm,.mkv"
          aria-label={`Your own picture for ${scene}`}
          hidden
          onChange={(e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) props.onPick(file);
          }}
        />
        {(image || clip) && <button onClick={props.onRemove}>Buy {image ? 'a picture' : 'a clip'} instead</button>}
        {!image && !clip && <small className="dim">or drop a picture (PNG, JPEG, WebP) or a clip (MP4, MOV, WebM) on the scene</small>}
      </div>
      {props.error && (
        <p className="error" role="alert">
          {props.error}
        </p>
      )}
    </div>
  );
}

/** Sends a picture for a scene and gives back what its image becomes; each scene keeps its own error. */
export function usePictureSend(project: string) {
  const [busy, setBusy] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const send = async (scene: string, file: File): Promise<SentPicture | null> => {
    setBusy(scene);
    setErrors((e) => ({ ...e, [scene]: '' }));
    try {
      return await sendPicture(project, scene, file);
    } catch (err) {
      setErrors((e) => ({ ...e, [scene]: (err as Error).message }));
      return null;
    } finally {
      setBusy(null);
    }
  };
  return { send, busy, error: (scene: string) => errors[scene] || null };
}

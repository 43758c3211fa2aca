import { useRef, useState } from 'react';
import type { EtaView, PlanStepView } from '../../../main/api/contract.ts';
import { mediaSrc } from '../api.ts';
import { useAction } from '../useLoad.ts';
import { StepState } from './ScenePreview.tsx';
import { useVideoShape } from './videoShape.tsx';

/**
 * The finished video at a size worth watching, with the browser's own controls (play, pause, scrub, volume,
 * full screen). In the desktop app it can be saved elsewhere or shown in its folder; in a browser, downloaded.
 */
export function FinalVideo({ project, render, ready = null }: { project: string; render: PlanStepView | null; ready?: EtaView | null }) {
  const video = useRef<HTMLVideoElement>(null);
  const action = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  const shape = useVideoShape();
  // Until a Generate starts it, there is nothing to show but an empty frame.
  if (!render || render.state === 'not generated') return null;
  const task = render.task;
  const url = render.state === 'ready' && task?.outputUrl ? mediaSrc(task.outputUrl) : null;
  const desktop = window.studio;
  return (
    <section className="final-video" aria-label="The finished video" data-testid="final-video">
      <h2>The finished video</h2>
      {url && task ? (
        <>
          <video ref={video} {...shape} src={url} controls preload="metadata" aria-label={`the finished video of ${project}`} data-testid="final-player" />
          <div className="row">
            <button onClick={() => void video.current?.requestFullscreen()}>Full screen</button>
            {desktop ? (
              <>
                <button
                  disabled={action.busy}
                  onClick={() =>
                    void action.run(async () => {
                      const name = await desktop.saveOutputAs(task.id);
                      setSaved(name && `Saved as ${name}`);
                    })
                  }
                >
                  Save as…
                </button>
                <button disabled={action.busy} onClick={() => void action.run(() => desktop.showOutputInFolder(task.id))}>
                  Show in folder
                </button>
              </>
            ) : (
              <a className="button" href={url} download={`${project.replace(/[\\/:*?"<>|]+/g, ' ').trim() || 'video'}.mp4`}>
                Download
              </a>
            )}
            {saved && <span className="note">{saved}</span>}
          </div>
          {action.error && (
            <p className="error" role="alert">
              {action.error}
            </p>
          )}
        </>
      ) : (
        <>
          <p data-testid="final-state">
            <StepState step={render} />
          </p>
          {ready && (
            <p className={`eta${ready.late ? ' late' : ''}`} data-testid="video-ready">
              The video: {ready.text}
              {ready.expectedAt && ` (ready by about ${new Date(ready.expectedAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })})`}
            </p>
          )}
        </>
      )}
    </section>
  );
}

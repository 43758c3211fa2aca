import { useRef, useState } from 'react';
import type { EtaView, PlanStepView } from '../../../main/api/contract.ts';
import { mediaSrc } from '../api.ts';
import { FileActions } from './FileActions.tsx';
import { FilmExports } from './FilmExports.tsx';
import { RenderProgress } from './RenderProgress.tsx';
import { StepState } from './ScenePreview.tsx';
import { useVideoShape } from './videoShape.tsx';

/**
 * The finished video at a size worth watching, with the browser's own controls (play, pause, scrub, volume,
 * full screen). In the desktop app it can be saved elsewhere or shown in its folder; in a browser, downloaded.
 * Its subtitles are a track shown from the start, unless they are burned into the picture (`burned`), where the
 * track stays off so the words are not shown twice. Under it, its exports. While it renders: its progress, the
 * time left and a Cancel.
 */
export function FinalVideo({ project, version, render, ready = null, burned = false }: { project: string; version: number; render: PlanStepView | null; ready?: EtaView | null; burned?: boolean }) {
  const video = useRef<HTMLVideoElement>(null);
  const shape = useVideoShape();
  const [menu, setMenu] = useState(false);
  // Until a Generate starts it, there is nothing to show but an empty frame.
  if (!render || render.state === 'not generated') return null;
  const task = render.task;
  const url = render.state === 'ready' && task?.outputUrl ? mediaSrc(task.outputUrl) : null;
  const rendering = task && (render.state === 'sending' || render.state === 'queued');
  return (
    <section className="final-video" aria-label="The finished video" data-testid="final-video">
      <h2>{rendering ? 'Rendering the film' : 'The finished video'}</h2>
      {url && task ? (
        <>
          <video ref={video} {...shape} src={url} controls preload="metadata" aria-label={`the finished video of ${project}`} data-testid="final-player">
            <track kind="subtitles" src={mediaSrc(`${task.outputUrl}/subtitles.vtt`)} srcLang="und" label="Narration" default={!burned} />
          </video>
          <div className="row">
            <button onClick={() => void video.current?.requestFullscreen()}>Full screen</button>
            <FileActions taskId={task.id} url={url} fileName={`${project.replace(/[\\/:*?"<>|]+/g, ' ').trim() || 'video'}.mp4`} />
            <button aria-expanded={menu} onClick={() => setMenu(!menu)}>
              Export as… <span aria-hidden="true">{menu ? '▴' : '▾'}</span>
            </button>
          </div>
        </>
      ) : rendering ? (
        <RenderProgress task={task} what="the film" />
      ) : (
        <>
          <p data-testid="final-state">
            <StepState step={render} />
            {render.state === 'cancelled' && <span className="dim"> · Generate renders it again; nothing is bought twice.</span>}
          </p>
          {ready && (
            <p className={`eta${ready.late ? ' late' : ''}`} data-testid="video-ready">
              The video: {ready.text}
              {ready.expectedAt && ` (ready by about ${new Date(ready.expectedAt).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })})`}
            </p>
          )}
        </>
      )}
      <FilmExports project={project} version={version} menu={url !== null && menu} onStarted={() => setMenu(false)} />
    </section>
  );
}

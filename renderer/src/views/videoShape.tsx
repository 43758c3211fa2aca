import { useState, type CSSProperties, type SyntheticEvent } from 'react';

/**
 * A player in its video's own shape: once the file's size is known, its ratio goes on the element as CSS
 * `aspect-ratio` (and `--ratio` for the stylesheet's sizes), so a portrait video is shown portrait, not in a
 * 16:9 box with bars. `data-shape` says the size, for a test to read.
 */
export function useVideoShape(): {
  onLoadedMetadata: (e: SyntheticEvent<HTMLVideoElement>) => void;
  style: CSSProperties;
  'data-shape'?: string;
} {
  const [size, setSize] = useState<{ w: number; h: number } | null>(null);
  const onLoadedMetadata = (e: SyntheticEvent<HTMLVideoElement>) => {
    const { videoWidth: w, videoHeight: h } = e.currentTarget;
    if (w > 0 && h > 0) setSize({ w, h });
  };
  if (!size) return { onLoadedMetadata, style: {} };
  return { onLoadedMetadata, style: { aspectRatio: `${size.w} / ${size.h}`, '--ratio': size.w / size.h } as CSSProperties, 'data-shape': `${size.w}x${size.h}` };
}

/** A video with its controls, shown in its own shape. */
export function ShapedVideo({ src, className, label }: { src: string; className: string; label?: string }) {
  const shape = useVideoShape();
  return <video {...shape} className={className} src={src} controls preload="metadata" aria-label={label} />;
}

import { useEffect, useId, useRef, type ReactNode } from 'react';

const FOCUSABLE = [
  'a[href]',
  'button:not([disabled])',
  'input:not([disabled])',
  'select:not([disabled])',
  'textarea:not([disabled])',
  'summary',
  'audio[controls]',
  'video[controls]',
  '[tabindex]:not([tabindex="-1"])',
].join(', ');

const focusables = (root: HTMLElement): HTMLElement[] =>
  [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => el.getClientRects().length > 0);

/** The dialogs open now, innermost last: only that one takes Tab and Escape. */
const open: HTMLElement[] = [];

/**
 * A modal dialog: focus moves into it when it opens (to the element marked `data-autofocus`, else the first
 * control), Tab and Shift+Tab stay inside it, Escape closes it, and
 * focus goes back where it was when it closes. Dialogs may open inside one another.
 */
export function Dialog(props: {
  title: ReactNode;
  onClose: () => void;
  children: ReactNode;
  /** A Close button in the header; a confirmation leaves it out and offers its own Cancel. */
  closeButton?: boolean;
  className?: string;
  testId?: string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const titleId = useId();
  const onClose = useRef(props.onClose);
  onClose.current = props.onClose;

  useEffect(() => {
    const dialog = ref.current!;
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    open.push(dialog);
    (dialog.querySelector<HTMLElement>('[data-autofocus]') ?? focusables(dialog)[0] ?? dialog).focus();
    const onKey = (e: KeyboardEvent) => {
      if (open.at(-1) !== dialog) return;
      if (e.key === 'Escape') {
        e.preventDefault();
        onClose.current();
        return;
      }
      if (e.key !== 'Tab') return;
      const items = focusables(dialog);
      const first = items[0];
      const last = items.at(-1);
      const active = document.activeElement;
      if (!first || !last) {
        e.preventDefault();
        dialog.focus();
      } else if (!dialog.contains(active)) {
        e.preventDefault();
        (e.shiftKey ? last : first).focus();
      } else if (e.shiftKey && (active === first || active === dialog)) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && active === last) {
        e.preventDefault();
        first.focus();
      }
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      open.splice(open.indexOf(dialog), 1);
      if (before?.isConnected) before.focus();
    };
  }, []);

  return (
    <div className="overlay">
      <div
        ref={ref}
        className={`panel ${props.className ?? ''}`}
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
        data-testid={props.testId}
      >
        <div className="dialog-head">
          <h2 id={titleId}>{props.title}</h2>
          {props.closeButton !== false && <button onClick={props.onClose}>Close</button>}
        </div>
        {props.children}
      </div>
    </div>
  );
}

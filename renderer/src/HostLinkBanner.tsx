import { useEffect, useRef, useState } from 'react';
import { onHostLink, type HostLink } from './api.ts';

/** Says at once when the studio behind this tab has stopped, and when the tab has found it again. */
export function HostLinkBanner() {
  const [state, setState] = useState<HostLink>('connecting');
  const [back, setBack] = useState(false);
  const wasDown = useRef(false);
  useEffect(
    () =>
      onHostLink((l) => {
        setState(l);
        if (l === 'down' || l === 'refused') wasDown.current = true;
        else if (l === 'up' && wasDown.current) {
          wasDown.current = false;
          setBack(true);
        }
      }),
    [],
  );
  useEffect(() => {
    if (!back) return;
    const timer = setTimeout(() => setBack(false), 4_000);
    return () => clearTimeout(timer);
  }, [back, state]);

  if (state === 'down') {
    return (
      <div className="host-link down" role="alert" data-testid="host-stopped">
        The studio has stopped. Nothing paid for is lost: it picks up where it was when it runs again. Start it
        again on the same data folder (<code>npm start</code> or <code>studio serve</code>) and this tab reconnects by itself; if it
        says it took another port, open the address it prints.
      </div>
    );
  }
  if (state === 'refused') {
    return (
      <div className="host-link down" role="alert" data-testid="host-refused">
        The studio is running again, but with a new key for its pages: open the address it printed.
      </div>
    );
  }
  return back ? (
    <div className="host-link up" role="status" data-testid="host-back">
      Connected to the studio again.
    </div>
  ) : null;
}

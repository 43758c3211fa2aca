/** Where a lost result's file was looked for on this machine, so the person can check before buying it again. */
export function LookedFor({ places }: { places: readonly string[] }) {
  return (
    <>
      {' '}
      (looked for at{' '}
      {places.map((p, i) => (
        <span key={p}>
          {i > 0 ? (i === places.length - 1 ? ' and ' : ', ') : ''}
          <code>{p}</code>
        </span>
      ))}
      )
    </>
  );
}

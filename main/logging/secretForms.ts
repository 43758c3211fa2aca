/**
 * Every form a held secret can take in a line of a log: as it is, its parts (fal's keys are `id:secret`; a URL's
 * password), URL-encoded with either case of hex, JSON-escaped, and inside base64 or base64url (an echoed Basic or
 * `Key` header) at any of the three byte offsets. Cut from every line for every key the studio holds (redact.ts), and
 * from words built from a provider's answer for the key it was sent (main/providers/keyScrub.ts).
 */

/** Shorter runs than this are not cut: they say nothing of a key and could be ordinary words. */
export const MIN_SECRET = 8;

/** The characters of a base64 text that depend on `secret`'s bytes alone, with `offset` bytes before it. */
function base64Core(secret: string, offset: number): string {
  const bytes = Buffer.concat([Buffer.alloc(offset), Buffer.from(secret)]);
  const first = offset === 0 ? 0 : 1;
  const last = Math.floor(bytes.length / 3);
  return bytes.toString('base64').slice(first * 4, last * 4);
}

export function secretForms(secret: string): string[] {
  const parts = [secret, ...secret.split(':')].filter((p) => p.length >= MIN_SECRET);
  const forms = new Set<string>();
  for (const p of parts) {
    const url = encodeURIComponent(p);
    forms.add(p).add(url).add(url.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())).add(JSON.stringify(p).slice(1, -1));
    for (const offset of [0, 1, 2]) {
      const core = base64Core(p, offset);
      forms.add(core).add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET);
}

/** Every form of every secret, longest first, so a form is never cut in part by a shorter one. */
export function formsOfAll(secrets: Iterable<string>): string[] {
  const all = new Set<string>();
  for (const s of secrets) for (const f of secretForms(s)) all.add(f);
  return [...all].sort((a, b) => b.length - a.length);
}

/**
 * A secret key cut out of text built from a provider's answer, in every form an answer could echo it: as sent, its
 * parts (fal's keys are `id:secret`, and the secret alone is the key), URL-encoded in either case, JSON-escaped, and
 * inside base64 or base64url (an echoed `Authorization: Key …` or Basic header) at any of the three byte offsets.
 */

const CUT = '[the admin key]';
/** Shorter runs than this are not cut: they say nothing of the key and could be ordinary words. */
const MIN_FORM = 8;

/**
 * The characters of a base64 text that depend on `secret`'s bytes alone, with `offset` bytes before it: the groups
 * of three bytes shared with whatever is around it change with that, the ones inside do not.
 */
function base64Core(secret: string, offset: number): string {
  const bytes = Buffer.concat([Buffer.alloc(offset), Buffer.from(secret)]);
  const first = offset === 0 ? 0 : 1;
  const last = Math.floor(bytes.length / 3);
  return bytes.toString('base64').slice(first * 4, last * 4);
}

function formsOf(key: string): string[] {
  const parts = [key, ...key.split(':')].filter((p) => p.length >= MIN_FORM);
  const forms = new Set<string>();
  for (const p of parts) {
    const url = encodeURIComponent(p);
    forms.add(p).add(url).add(url.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())).add(JSON.stringify(p).slice(1, -1));
    for (const offset of [0, 1, 2]) {
      const core = base64Core(p, offset);
      forms.add(core).add(core.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  // The longest first, so a form is never cut in part by one of its own pieces.
  return [...forms].filter((f) => f.length >= MIN_FORM).sort((a, b) => b.length - a.length);
}

/** `text` with the key cut out in every form, then cut to `max` characters: the cut comes last so no piece of a key is left at the end. */
export function scrubKey(text: string, key: string, max = 200): string {
  let out = text;
  for (const form of formsOf(key)) out = out.split(form).join(CUT);
  return out.slice(0, max);
}

import { formsOfAll } from '../logging/secretForms.ts';

/**
 * A secret key cut out of text built from a provider's answer, in every form an answer could echo it: as sent, its
 * parts (fal's keys are `id:secret`, and the secret alone is the key), URL-encoded in either case, JSON-escaped, and
 * inside base64 or base64url (an echoed `Authorization: Key …` or Basic header) at any of the three byte offsets.
 * The forms are the logs' own (main/logging/secretForms.ts).
 */

const CUT = '[the admin key]';

/** `text` with the key cut out in every form, then cut to `max` characters: the cut comes last so no piece of a key is left at the end. */
export function scrubKey(text: string, key: string, max = 200): string {
  let out = text;
  for (const form of formsOfAll([key])) out = out.split(form).join(CUT);
  return out.slice(0, max);
}

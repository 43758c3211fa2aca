import { InvalidInput } from './port.ts';

/** A small declarative input schema, enough to refuse bad input with a message a person can act on. */
export type Field =
  | { type: 'string'; required?: boolean; maxLength?: number; oneOf?: readonly string[]; hint?: string }
  | { type: 'number' | 'integer'; required?: boolean; min?: number; max?: number; hint?: string }
  | { type: 'boolean'; required?: boolean; hint?: string };

export type InputSchema = Record<string, Field>;

function describe(name: string, f: Field): string {
  if (f.type === 'string') return f.oneOf ? `"${name}" must be one of ${f.oneOf.join(', ')}` : `"${name}" must be text`;
  if (f.type === 'boolean') return `"${name}" must be true or false`;
  const range = f.min !== undefined && f.max !== undefined ? ` from ${f.min} to ${f.max}` : f.min !== undefined ? ` of at least ${f.min}` : '';
  return `"${name}" must be ${f.type === 'integer' ? 'a whole number' : 'a number'}${range}`;
}

/** Checks an input object field by field; unknown fields pass through to the provider as they are. */
export function checkInput(schema: InputSchema, input: unknown): Record<string, unknown> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidInput('the input must be a JSON object, for example {"prompt": "a red fox"}');
  }
  const obj = input as Record<string, unknown>;
  for (const [name, f] of Object.entries(schema)) {
    const v = obj[name];
    if (v === undefined || v === null) {
      if (f.required) throw new InvalidInput(`"${name}" is required${f.hint ? ` (${f.hint})` : ''}`);
      continue;
    }
    const ok =
      f.type === 'string'
        ? typeof v === 'string' && v.trim() !== '' && (f.maxLength === undefined || v.length <= f.maxLength) && (!f.oneOf || f.oneOf.includes(v))
        : f.type === 'boolean'
          ? typeof v === 'boolean'
          : typeof v === 'number' &&
            Number.isFinite(v) &&
            (f.type === 'number' || Number.isInteger(v)) &&
            (f.min === undefined || v >= f.min) &&
            (f.max === undefined || v <= f.max);
    if (!ok) {
      const tooLong = f.type === 'string' && typeof v === 'string' && f.maxLength !== undefined && v.length > f.maxLength;
      throw new InvalidInput(tooLong ? `"${name}" is too long (at most ${f.maxLength} characters)` : describe(name, f));
    }
  }
  return obj;
}

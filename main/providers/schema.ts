import { InvalidInput } from './invalidInput.ts';

/** A small declarative input schema, enough to refuse bad input with a message a person can act on. */
export type Field =
  /** `format: 'file-url'`: a file the provider fetches, by an http(s) address or inline as a data: URI. */
  | { type: 'string'; required?: boolean; maxLength?: number; oneOf?: readonly string[]; format?: 'file-url'; hint?: string }
  | { type: 'number' | 'integer'; required?: boolean; min?: number; max?: number; hint?: string }
  | { type: 'boolean'; required?: boolean; hint?: string }
  /** An object whose own fields are checked in turn (fal's `image_size: {width, height}`). */
  | { type: 'object'; required?: boolean; fields: InputSchema; hint?: string }
  /** Any one of several shapes (a named size, or a width and height). */
  | { type: 'either'; required?: boolean; of: readonly Field[]; hint?: string };

export type InputSchema = Record<string, Field>;

function expected(f: Field): string {
  switch (f.type) {
    case 'string':
      return f.oneOf ? `one of ${f.oneOf.join(', ')}` : f.format === 'file-url' ? 'an https or http address of the file, or a data: URI' : 'text';
    case 'boolean':
      return 'true or false';
    case 'object':
      return `an object with ${Object.keys(f.fields).join(', ')}`;
    case 'either':
      return f.of.map(expected).join(', or ');
    default: {
      if (f.min !== undefined && f.min === f.max) return String(f.min);
      const range = f.min !== undefined && f.max !== undefined ? ` from ${f.min} to ${f.max}` : f.min !== undefined ? ` of at least ${f.min}` : '';
      return `${f.type === 'integer' ? 'a whole number' : 'a number'}${range}`;
    }
  }
}

/**
 * Characters as a JSON Schema `maxLength` counts them: code points (JSON Schema 2020-12, "the number of
 * characters"), so an emoji counts once, not as the two UTF-16 units of `String.length`.
 */
function characters(text: string): number {
  return [...text].length;
}

/** An address the provider's runner can fetch a file from, or the file itself inline. */
function fileUrl(text: string): boolean {
  if (/^data:[^,]*,/i.test(text)) return true;
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** What is wrong with one value, or null when it fits the field. */
function problem(name: string, f: Field, v: unknown): string | null {
  switch (f.type) {
    case 'string': {
      const length = typeof v === 'string' && f.maxLength !== undefined ? characters(v) : 0;
      if (f.maxLength !== undefined && length > f.maxLength) return `"${name}" is too long (at most ${f.maxLength} characters): it has ${length}, so shorten it by ${length - f.maxLength}`;
      if (typeof v === 'string' && f.format === 'file-url' && v.trim() !== '' && !fileUrl(v)) return `"${name}" must be ${expected(f)}, not "${v.slice(0, 100)}"`;
      return typeof v === 'string' && v.trim() !== '' && (!f.oneOf || f.oneOf.includes(v)) ? null : `"${name}" must be ${expected(f)}`;
    }
    case 'boolean':
      return typeof v === 'boolean' ? null : `"${name}" must be ${expected(f)}`;
    case 'object':
      if (!v || typeof v !== 'object' || Array.isArray(v)) return `"${name}" must be ${expected(f)}`;
      return fieldsProblem(f.fields, v as Record<string, unknown>, `${name}.`)?.text ?? null;
    case 'either': {
      if (f.of.some((alt) => problem(name, alt, v) === null)) return null;
      // An object given where an object is one of the shapes: say which of its fields is wrong.
      const object = f.of.find((alt) => alt.type === 'object');
      return object && v && typeof v === 'object' && !Array.isArray(v) ? problem(name, object, v) : `"${name}" must be ${expected(f)}`;
    }
    default: {
      const ok =
        typeof v === 'number' &&
        Number.isFinite(v) &&
        (f.type === 'number' || Number.isInteger(v)) &&
        (f.min === undefined || v >= f.min) &&
        (f.max === undefined || v <= f.max);
      return ok ? null : `"${name}" must be ${expected(f)}${typeof v === 'number' ? `, not ${v}` : ''}`;
    }
  }
}

/** The first field that is wrong: its top-level name and what is wrong with it. */
function fieldsProblem(schema: InputSchema, obj: Record<string, unknown>, prefix = ''): { field: string; text: string } | null {
  for (const [name, f] of Object.entries(schema)) {
    const v = obj[name];
    if (v === undefined || v === null) {
      if (f.required) return { field: name, text: `"${prefix}${name}" is required${f.hint ? ` (${f.hint})` : ''}` };
      continue;
    }
    const wrong = problem(`${prefix}${name}`, f, v);
    if (wrong) return { field: name, text: wrong };
  }
  return null;
}

/**
 * A whole number past Number.MAX_SAFE_INTEGER anywhere in the input: JSON text such as a 64-bit seed is read
 * into the nearest number that can be kept, so what would be sent is not what was written.
 */
function unsafeNumber(value: unknown, name: string): { field: string; text: string } | null {
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) {
    const limit = Number.MAX_SAFE_INTEGER;
    return { field: name.split(/[.[]/)[0]!, text: `"${name}" is too large to be kept exactly (it reads as ${value}); give a whole number from -${limit} to ${limit}` };
  }
  if (!value || typeof value !== 'object') return null;
  for (const [key, v] of Object.entries(value)) {
    const wrong = unsafeNumber(v, Array.isArray(value) ? `${name}[${key}]` : name ? `${name}.${key}` : key);
    if (wrong) return wrong;
  }
  return null;
}

/** Checks an input object field by field; unknown fields pass through to the provider as they are. */
export function checkInput(schema: InputSchema, input: unknown): Record<string, unknown> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidInput('the input must be a JSON object, for example {"prompt": "a red fox"}');
  }
  const obj = input as Record<string, unknown>;
  const wrong = fieldsProblem(schema, obj) ?? unsafeNumber(obj, '');
  if (wrong) throw new InvalidInput(wrong.text, wrong.field);
  return obj;
}

import { formsOfAll, MIN_SECRET } from './secretForms.ts';

/**
 * What is cut from every line before it reaches a log file, the terminal or "Copy diagnostics": every key the
 * studio holds, in every form (secretForms.ts), anything shaped like a key it does not hold, and, unless the person
 * asked for them, prompts. Signal Desktop runs each log line through one such function before it is written
 * (redactAll, signalapp/Signal-Desktop ts/util/privacy.ts, given to its log destination in
 * ts/logging/main_process_logging.ts) and again over the whole text a person submits (ts/logging/debuglogs.ts).
 */

export const KEY_CUT = '[key]';
export const PROMPT_CUT = '[prompt]';

/** A token-like run: long, of URL-safe and base64 characters, with a digit in it (so a word after "Bearer" is left). */
const TOKEN = String.raw`(?=[A-Za-z0-9._~+/=:-]*\d)[A-Za-z0-9._~+/=:-]{12,}`;

/** Shapes of keys, cut whether or not the studio holds them: a key of another account pasted into a prompt or a setting. */
const KEY_SHAPES: [RegExp, string][] = [
  // OpenAI (sk-, sk-proj-, sk-admin-), ElevenLabs (sk_), Replicate (r8_).
  [/\bsk-[A-Za-z0-9_-]{16,}/g, KEY_CUT],
  [/\bsk_[A-Za-z0-9]{24,}/g, KEY_CUT],
  [/\br8_[A-Za-z0-9]{20,}/g, KEY_CUT],
  // fal: a key id (a UUID) and its secret.
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[A-Za-z0-9]{16,}/gi, KEY_CUT],
  // Authorization headers: fal's "Key", and Bearer, Token, Basic.
  [new RegExp(String.raw`\b(Key|Bearer|Token|Basic)(\s+)${TOKEN}`, 'g'), `$1$2${KEY_CUT}`],
  // A named credential: a header, a JSON field, a query parameter, the host's #token=.
  [
    /\b(x-api-key|xi-api-key|api[-_]?key|apikey|admin[-_]?key|access[-_]?token|auth[-_]?token|token|secret|password|passwd|signature|sig|x-amz-signature|x-amz-credential|x-amz-security-token)(["']?\s*[:=]\s*["']?)(?!\[key\])[^\s"',;&#}]+/gi,
    `$1$2${KEY_CUT}`,
  ],
  // A password in an address: postgres://ann:secret@db/studio.
  // The scheme is bounded: unbounded, a long run of "a.a.a…" is scanned to its end from every position, in time
  // growing with the square of the line.
  [/\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:@/]+:)[^\s@/]+@/gi, `$1${KEY_CUT}@`],
];

/** Fields that carry a prompt in a task's input, a storyboard, or a provider's answer echoing either. */
export const PROMPT_FIELDS = ['prompt', 'negative_prompt', 'text', 'idea', 'narration', 'imagePrompt', 'motionPrompt', 'instructions', 'input'];
const FIELD_NAMES = PROMPT_FIELDS.join('|');
const PROMPT_SHAPES: [RegExp, string][] = [
  // "prompt": "…" in JSON, and \"prompt\": \"…\" in JSON inside a JSON string.
  [new RegExp(String.raw`("(?:${FIELD_NAMES})"\s*:\s*)"(?:[^"\\]|\\.)*"`, 'g'), `$1"${PROMPT_CUT}"`],
  [new RegExp(String.raw`(\\"(?:${FIELD_NAMES})\\"\s*:\s*)\\"(?:[^"\\]|\\[^"])*\\"`, 'g'), `$1\\"${PROMPT_CUT}\\"`],
  // prompt=… in a query string or a form.
  [new RegExp(String.raw`([?&](?:${FIELD_NAMES})=)[^&\s#]+`, 'g'), `$1${PROMPT_CUT}`],
];

export function cutKeyShapes(text: string): string {
  return KEY_SHAPES.reduce((out, [pattern, by]) => out.replace(pattern, by), text);
}

export function cutPromptFields(text: string): string {
  return PROMPT_SHAPES.reduce((out, [pattern, by]) => out.replace(pattern, by), text);
}

export function cutForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(KEY_CUT);
  return out;
}

const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$/i;
const URL_PASSWORD = /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:@/]+:([^\s@/]+)@/gi;

/** The passwords in the addresses of a text (a team database's), as written and decoded. */
function urlPasswords(text: string): string[] {
  return [...text.matchAll(URL_PASSWORD)].flatMap((m) => {
    const raw = m[1]!;
    try {
      return [raw, decodeURIComponent(raw)];
    } catch {
      return [raw];
    }
  });
}

/** The secrets an environment holds: variables named like keys (FAL_KEY, REPLICATE_API_TOKEN, PGPASSWORD), and passwords in addresses (STUDIO_DATABASE_URL). */
export function envSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([name, value]) => (!value ? [] : SECRET_NAME.test(name) ? [value] : urlPasswords(value)));
}

/** The secrets in settings or any such object: text under a field named like a key (providers.fal.key, adminKey), and passwords in addresses (team.databaseUrl). */
export function secretsIn(value: unknown, field = ''): string[] {
  if (typeof value === 'string') return /key$|token|secret|password/i.test(field) ? [value] : urlPasswords(value);
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => secretsIn(v, Array.isArray(value) ? field : k));
}

/**
 * The cut every line goes through, with the sources of the keys held now: a key saved in Settings while the studio
 * runs is cut from the next line. Prompts are cut unless STUDIO_LOG_PROMPTS=1 or a rule added here (settings'
 * logging.prompts) says the person asked for them.
 */
export class Redaction {
  private readonly sources: (() => Iterable<string | null | undefined>)[] = [];
  private readonly promptRules: (() => boolean)[] = [];
  private known: { secrets: string; forms: string[] } = { secrets: '', forms: [] };

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.sources.push(() => envSecrets(env));
    this.promptRules.push(() => env.STUDIO_LOG_PROMPTS === '1');
  }

  /** Keys to cut from now on, read again for every line. */
  hold(source: () => Iterable<string | null | undefined>): void {
    this.sources.push(source);
  }

  /** Another way the person can ask for prompts in the logs. */
  logPromptsWhen(rule: () => boolean): void {
    this.promptRules.push(rule);
  }

  get promptsAllowed(): boolean {
    return this.promptRules.some((rule) => {
      try {
        return rule();
      } catch {
        return false;
      }
    });
  }

  cut(text: string): string {
    const out = cutKeyShapes(cutForms(text, this.forms()));
    return this.promptsAllowed ? out : cutPromptFields(out);
  }

  /** The forms of the keys held now, worked out again only when the keys changed. */
  private forms(): string[] {
    const secrets: string[] = [];
    for (const source of this.sources) {
      try {
        for (const s of source()) if (s && s.length >= MIN_SECRET) secrets.push(s);
      } catch {
        // A source that cannot be read now (settings mid-write) holds nothing new; the forms known stay cut.
        return this.known.forms;
      }
    }
    const key = secrets.join('\u0000');
    if (key !== this.known.secrets) this.known = { secrets: key, forms: formsOfAll(secrets) };
    return this.known.forms;
  }
}

/**
 * Money as the person reads it: whole cents, rounded half up from the integer micro-units once, here, for every
 * place that shows money. A float's own rounding (0.305 → "0.30" but 0.025 → "0.03") would make a refusal and
 * `studio spend` disagree by a cent on the same sum.
 */

/** `micros` (millionths of `currency`) in cents, half up: 305000 → "0.31", 25000 → "0.03", -5000 → "-0.01". */
export function moneyWords(micros: number, currency: string): string {
  return `${cents(micros)} ${currency}`;
}

/** An amount in whole units of its currency (as the app's views carry it), in the same words; the figure alone without `currency`. */
export function amountWords(amount: number, currency?: string): string {
  return currency === undefined ? cents(amount * 1e6) : moneyWords(amount * 1e6, currency);
}

function cents(micros: number): string {
  const whole = Math.round(micros);
  const cents = Math.floor((Math.abs(whole) + 5_000) / 10_000);
  const sign = whole < 0 && cents > 0 ? '-' : '';
  return `${sign}${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/**
 * Money as the person reads it, decided here for every place that shows money (the CLI, refusals, the API's
 * words and the app, which imports this module). Money is kept in whole micro-units (millionths of the currency),
 * and it is shown exactly: at least two decimals, more only where the amount has them (0.003 USD, 0.0255 USD,
 * 0.000703 USD), never rounded. A shown total is then the sum of its shown rows to the last digit, and a
 * sub-cent request never reads as "0.00 USD".
 */

/** `micros` (millionths of `currency`) exactly: 305000 → "0.305", 3000 → "0.003", 2_500_000 → "2.50", -5000 → "-0.005". */
export function moneyWords(micros: number, currency: string): string {
  return `${exact(micros)} ${currency}`;
}

/** An amount in whole units of its currency (as the app's views carry it), in the same words; the figure alone without `currency`. */
export function amountWords(amount: number, currency?: string): string {
  return currency === undefined ? exact(amount * 1e6) : moneyWords(amount * 1e6, currency);
}

/** Micro-units as decimals: whole units, then the six digits of the fraction less its trailing zeros, keeping two. */
function exact(micros: number): string {
  // An amount carried in currency units comes back within a float's error of its micro-units: the nearest one.
  const whole = Math.round(micros);
  const abs = Math.abs(whole);
  const fraction = String(abs % 1_000_000).padStart(6, '0').replace(/0{1,4}$/, '');
  return `${whole < 0 ? '-' : ''}${Math.floor(abs / 1_000_000)}.${fraction}`;
}

/** How "possibly charged" is counted, said the same in the estimate, the spend view and docs/money.md. */
export const POSSIBLY_CHARGED_WORDS =
  'Possibly charged is each request whose outcome is unknown, at its bill if it has one, else its estimate, and each earlier attempt sent again; ' +
  'the totals and the budget count it alike, as spent, and the budget also holds work enqueued but not sent yet.';

import { describe, expect, it } from 'vitest';
import { amountWords } from '../main/api/contract.ts';
import { money as cliMoney } from '../main/cli/output.ts';
import { moneyWords } from '../main/domain/money.ts';
import { money, OverBudgetRefused } from '../main/pipeline/refusals.ts';

describe('money as it is shown', () => {
  it('is exact to the micro-unit, the same in a refusal, on the command line and in the app', () => {
    // Rounded to cents, a FLUX schnell image (0.003 USD) read "0.00 USD" and rows did not add up to their total.
    for (const show of [(m: number) => money(m, 'USD'), (m: number) => cliMoney(m, 'USD'), (m: number) => amountWords(m / 1e6, 'USD')]) {
      expect([305_000, 25_000, 1_005_000, 4_999, 5_000, 0, 12_345_678, 3_000, 25_500, 2_500_000, 703].map(show)).toEqual([
        '0.305 USD', '0.025 USD', '1.005 USD', '0.004999 USD', '0.005 USD', '0.00 USD', '12.345678 USD', '0.003 USD', '0.0255 USD', '2.50 USD', '0.000703 USD',
      ]);
    }
    expect(moneyWords(-5_000, 'EUR')).toBe('-0.005 EUR');
    expect(moneyWords(-10_000, 'EUR')).toBe('-0.01 EUR');
    expect(amountWords(0.1 + 0.2)).toBe('0.30');
    expect(amountWords(0.003 * 3)).toBe('0.009');
  });

  it('three rows of half a cent show a total that is their sum at the digits shown', () => {
    const rows = [5_000, 5_000, 5_000];
    const shown = rows.map((m) => Number(moneyWords(m, 'USD').split(' ')[0]));
    expect(moneyWords(rows.reduce((a, b) => a + b, 0), 'USD')).toBe('0.015 USD');
    expect(shown.reduce((a, b) => a + b, 0).toFixed(3)).toBe('0.015');
  });

  it('a budget refusal says the same figures `studio spend` does', () => {
    const refused = new OverBudgetRefused(1_000_000, { spent: 305_000, added: 700_000 }, { spent: 0, added: 0 }, 'USD');
    expect(cliMoney(305_000, 'USD')).toBe('0.305 USD');
    expect(refused.message).toBe('this Generate would cost about 0.70 USD; with 0.305 USD already spent, possibly charged or enqueued, that is 0.005 USD over the budget of 1.00 USD. Raise the budget or change the storyboard; nothing was enqueued.');
  });
});

describe('a budget refusal of a Generate that adds to one kind of money only', () => {
  it('does not call the other kind over the budget: it is not judged', () => {
    const refused = new OverBudgetRefused(400_000, { spent: 500_000, added: 0 }, { spent: 300_000, added: 200_000 }, 'USD');
    expect(refused.message).toBe(
      'this Generate would go over the budget of 0.40 USD, which holds real money and simulated money each on its own: ' +
        'real money, 0.50 USD already spent, possibly charged or enqueued (not judged: this Generate adds none); ' +
        "simulated money (the simulator's made-up prices, never charged), about 0.20 USD new with 0.30 USD already spent, possibly charged or enqueued, comes to 0.50 USD, 0.10 USD over it. " +
        'Raise the budget or change the storyboard; nothing was enqueued.',
    );
  });
});

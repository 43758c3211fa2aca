import { describe, expect, it } from 'vitest';
import { amountWords } from '../main/api/contract.ts';
import { money as cliMoney } from '../main/cli/output.ts';
import { moneyWords } from '../main/domain/money.ts';
import { money, OverBudgetRefused } from '../main/pipeline/refusals.ts';

describe('money as it is shown', () => {
  it('rounds half a cent up, the same in a refusal, on the command line and in the app', () => {
    // A float's own rounding made these "0.30" and "0.03": a refusal and `studio spend` disagreed on one sum.
    for (const show of [(m: number) => money(m, 'USD'), (m: number) => cliMoney(m, 'USD'), (m: number) => amountWords(m / 1e6, 'USD')]) {
      expect([305_000, 25_000, 1_005_000, 4_999, 5_000, 0, 12_345_678].map(show)).toEqual(['0.31 USD', '0.03 USD', '1.01 USD', '0.00 USD', '0.01 USD', '0.00 USD', '12.35 USD']);
    }
    expect(moneyWords(-5_000, 'EUR')).toBe('-0.01 EUR');
    expect(amountWords(0.1 + 0.2)).toBe('0.30');
  });

  it('a budget refusal says the same figures `studio spend` does', () => {
    const refused = new OverBudgetRefused(1_000_000, { spent: 305_000, added: 700_000 }, { spent: 0, added: 0 }, 'USD');
    expect(cliMoney(305_000, 'USD')).toBe('0.31 USD');
    expect(refused.message).toBe('this Generate would cost about 0.70 USD; with 0.31 USD already spent, possibly charged or enqueued, that is 0.01 USD over the budget of 1.00 USD. Raise the budget or change the storyboard; nothing was enqueued.');
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

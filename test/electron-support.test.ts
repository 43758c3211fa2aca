import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The stable release date of each Electron major. "The latest three stable major versions are supported by the
 * Electron team" (electronjs.org docs, tutorial/electron-timelines, "Version support policy"). Dates to 40 are
 * from that page's timeline table; it now points to releases.electronjs.org/schedule, where 41 on come from
 * (46 as scheduled). Add each new major once it is scheduled.
 */
const STABLE_RELEASES: ReadonlyArray<readonly [major: number, stable: string]> = [
  [38, '2025-09-02'],
  [39, '2025-10-28'],
  [40, '2026-01-13'],
  [41, '2026-03-10'],
  [42, '2026-05-04'],
  [43, '2026-06-29'],
  [44, '2026-08-24'],
  [45, '2026-10-19'],
  [46, '2027-01-04'],
];

/** "Electron's cadence between major version releases is 8 weeks long" (tutorial/electron-timelines). */
const CADENCE_DAYS = 56;

/** The three majors Electron supports on `day` (YYYY-MM-DD): the newest three released on or before it. */
function supportedOn(day: string, table = STABLE_RELEASES): number[] {
  return table
    .filter(([, stable]) => stable <= day)
    .map(([major]) => major)
    .sort((a, b) => b - a)
    .slice(0, 3);
}

/** The day the major after the table's newest is due, past which the table may miss a release. */
function tableDueFor(table = STABLE_RELEASES): { major: number; day: string } {
  const [major, stable] = table.reduce((newest, entry) => (entry[0] > newest[0] ? entry : newest));
  return { major: major + 1, day: new Date(Date.parse(`${stable}T00:00:00Z`) + CADENCE_DAYS * 86_400_000).toISOString().slice(0, 10) };
}

const ROOT = join(import.meta.dirname, '..');

/** The Electron major the project pins, where package.json and the lockfile agree. */
function pinnedMajor(): number {
  const declared = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies.electron;
  const locked = (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> }).packages['node_modules/electron']?.version;
  expect(locked, 'package-lock.json must hold the Electron package.json pins; run npm install').toBe(declared);
  return Number(declared!.split('.')[0]);
}

describe("the Electron this project pins is one Electron supports", () => {
  it("is among the three newest stable majors today, by a table that is not out of date", () => {
    const today = new Date().toISOString().slice(0, 10);
    const due = tableDueFor();
    expect(
      today <= due.day,
      `Electron ${due.major} was due on ${due.day}, and the table of stable releases in test/electron-support.test.ts ends before it: update the table from releases.electronjs.org/schedule.`,
    ).toBe(true);
    const supported = supportedOn(today);
    const pinned = pinnedMajor();
    expect(
      pinned >= Math.min(...supported),
      `Electron ${pinned} is out of support: on ${today} Electron supports ${supported.join(', ')}. Move package.json's electron to ${supported[0]}.`,
    ).toBe(true);
  });

  it('counts only majors released by the day, the newest three, and knows when its table runs out', () => {
    expect(supportedOn('2026-12-02')).toEqual([45, 44, 43]);
    expect(supportedOn('2026-10-18')).toEqual([44, 43, 42]);
    expect(supportedOn('2027-01-04')).toEqual([46, 45, 44]);
    expect(tableDueFor()).toEqual({ major: 47, day: '2027-03-01' });
    expect(tableDueFor([[45, '2026-10-19']])).toEqual({ major: 46, day: '2026-12-14' });
  });
});

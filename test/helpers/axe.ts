import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_JS = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface Finding {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** axe-core over the page as it is; evaluated through the debugging protocol, so the page's CSP stays on. */
export async function axe(page: Page): Promise<Finding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_JS);
  return page.evaluate(async () => {
    const run = (window as unknown as { axe: { run(c: Document, o: object): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await run.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
}

export const serious = (findings: Finding[]) => findings.filter((f) => f.impact === 'serious' || f.impact === 'critical');

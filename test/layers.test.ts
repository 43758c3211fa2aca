import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayers, layerProblems, parseLayers, readImports, repoRoot, type ImportMap } from './helpers/layerCheck.ts';

const repo = repoRoot();
const layers = parseLayers(readFileSync(join(repo, 'docs', 'architecture.md'), 'utf8'));
const problems = (imports: ImportMap) => layerProblems(checkLayers(layers, imports));

describe('the layers of docs/architecture.md', () => {
  it('hold for every file of app/, renderer/ and main/, type imports included', () => {
    const imports = readImports(repo);
    expect(imports.size).toBeGreaterThan(200);
    expect(problems(imports)).toEqual([]);
  });

  it('are read bottom to top from the table, the domain at the bottom', () => {
    expect(layers.at(-1)).toEqual({ name: 'domain', holds: ['main/domain/'], only: null });
    expect(layers.find((layer) => layer.name === 'store')?.only).toEqual(['main/db/', 'main/domain/']);
  });

  it('fail on an import up the order, naming both files and both layers', () => {
    const imports: ImportMap = new Map([
      ['main/domain/storyboard.ts', ['main/engine/supervisor.ts']],
      ['main/engine/supervisor.ts', []],
    ]);
    expect(problems(imports)).toEqual([
      'main/domain/storyboard.ts (layer "domain") imports main/engine/supervisor.ts (layer "engine"): an import up the layer order',
    ]);
  });

  it('fail on an import outside what a layer may import, even one below it', () => {
    const imports: ImportMap = new Map([
      ['main/store/port.ts', ['main/media/probe.ts']],
      ['main/media/probe.ts', []],
    ]);
    expect(problems(imports)).toEqual([
      'main/store/port.ts (layer "store") imports main/media/probe.ts (layer "base"): which may import only main/db/, main/domain/',
    ]);
  });

  it('fail on two files of one layer that import each other, naming the circle', () => {
    const imports: ImportMap = new Map([
      ['main/engine/executor.ts', ['main/engine/completion.ts']],
      ['main/engine/completion.ts', ['main/engine/executor.ts']],
    ]);
    expect(problems(imports)).toEqual(['a circle of imports: main/engine/completion.ts -> main/engine/executor.ts -> main/engine/completion.ts']);
  });

  it('fail on a file in no declared layer', () => {
    const imports: ImportMap = new Map([['main/elsewhere/thing.ts', []]]);
    expect(problems(imports)).toEqual([
      'main/elsewhere/thing.ts is in no layer: add its folder to the table under "## Layers" in docs/architecture.md',
    ]);
  });
});

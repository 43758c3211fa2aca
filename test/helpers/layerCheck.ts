import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/**
 * The layer check: every relative import of app/, renderer/ and main/ (type imports too) must point to the importer's
 * own layer or one below it, and no two files may import each other round a circle. The layers are the table under
 * "## Layers" in docs/architecture.md, so the page and the check cannot drift apart.
 */

export interface Layer {
  name: string;
  /** Folders (ending in "/") and files, relative to the repository. */
  holds: string[];
  /** Null: every layer below. Otherwise only these files or folders (and the layer itself). */
  only: string[] | null;
}

/** Repository-relative path → the repository-relative paths it imports. */
export type ImportMap = Map<string, string[]>;

const ROOTS = ['app', 'renderer', 'main'];
const SOURCE = /\.(ts|tsx|mts)$/;
const LAYERS_HEADING = '## Layers';

/** The table of layers under "## Layers", top to bottom: | layer | holds | may import |. */
export function parseLayers(markdown: string): Layer[] {
  const start = markdown.indexOf(`\n${LAYERS_HEADING}\n`);
  if (start < 0) throw new Error(`no "${LAYERS_HEADING}" heading in the architecture page`);
  const rest = markdown.slice(start + LAYERS_HEADING.length + 2);
  const end = rest.search(/\n## /);
  const section = end < 0 ? rest : rest.slice(0, end);
  const rows = section.split('\n').filter((line) => line.startsWith('|')).slice(2);
  const layers = rows.map((row) => {
    const cells = row.split('|').slice(1, -1).map((cell) => cell.trim());
    const [name, holds, may] = cells;
    if (!name || !holds || may === undefined) throw new Error(`a row of the layer table needs three cells: ${row}`);
    const only = ticked(may);
    return { name, holds: ticked(holds), only: only.length > 0 ? only : null };
  });
  if (layers.length === 0) throw new Error(`the "${LAYERS_HEADING}" section holds no table of layers`);
  return layers;
}

function ticked(cell: string): string[] {
  return [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

/** Every source file under app/, renderer/ and main/ with the files it imports by a relative path. */
export function readImports(repo: string): ImportMap {
  const map: ImportMap = new Map();
  for (const root of ROOTS) {
    for (const file of sourceFiles(join(repo, root))) {
      const from = relative(repo, file).split('\\').join('/');
      const text = readFileSync(file, 'utf8');
      const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
      map.set(from, found.filter((spec) => spec.startsWith('.')).map((spec) => posix.normalize(posix.join(posix.dirname(from), spec))));
    }
  }
  return map;
}

function sourceFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : sourceFiles(path);
    return SOURCE.test(e.name) ? [path] : [];
  });
}

/** The index of the layer that holds a file (the longest matching entry wins), or -1. */
function layerOf(layers: Layer[], file: string): number {
  let best = -1;
  let bestLength = -1;
  layers.forEach((layer, index) => {
    for (const entry of layer.holds) {
      if (covers(entry, file) && entry.length > bestLength) {
        best = index;
        bestLength = entry.length;
      }
    }
  });
  return best;
}

function covers(entry: string, file: string): boolean {
  return entry.endsWith('/') ? file.startsWith(entry) : file === entry;
}

export interface LayerReport {
  /** Files in no declared layer. */
  unlayered: string[];
  /** Imports that run up the order, or outside what a layer may import. */
  upward: string[];
  /** Circles of more than one file, each as a path that ends where it starts (a -> b -> a). */
  circles: string[][];
}

export function checkLayers(layers: Layer[], imports: ImportMap): LayerReport {
  const unlayered: string[] = [];
  const upward: string[] = [];
  for (const [from, targets] of imports) {
    const own = layerOf(layers, from);
    if (own < 0) {
      unlayered.push(from);
      continue;
    }
    const layer = layers[own]!;
    for (const to of targets) {
      const theirs = layerOf(layers, to);
      if (theirs === own) continue;
      const allowed = layer.only ? layer.only.some((entry) => covers(entry, to)) : theirs > own;
      if (allowed) continue;
      const where = theirs < 0 ? 'no layer' : `layer "${layers[theirs]!.name}"`;
      const why = layer.only ? `which may import only ${layer.only.join(', ')}` : 'an import up the layer order';
      upward.push(`${from} (layer "${layer.name}") imports ${to} (${where}): ${why}`);
    }
  }
  return { unlayered: unlayered.sort(), upward: upward.sort(), circles: circlesOf(imports).map((group) => roundOf(group, imports)) };
}

/** Strongly connected groups of more than one file (Tarjan), each sorted, largest first. */
export function circlesOf(imports: ImportMap): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of imports.get(node) ?? []) {
      if (!imports.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of imports.keys()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => b.length - a.length);
}

/** One way round a group of files that import each other: from its first file back to it, through the group only. */
function roundOf(group: string[], imports: ImportMap): string[] {
  const members = new Set(group);
  const start = group[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const to of imports.get(file) ?? []) {
      if (to === start) {
        const path = [start];
        for (let at = file; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (members.has(to) && !cameFrom.has(to)) {
        cameFrom.set(to, file);
        queue.push(to);
      }
    }
  }
  return [...group, start];
}

/** The problems of a report as lines for a person, empty when the layers hold. */
export function layerProblems(report: LayerReport): string[] {
  return [
    ...report.unlayered.map((file) => `${file} is in no layer: add its folder to the table under "${LAYERS_HEADING}" in docs/architecture.md`),
    ...report.upward,
    ...report.circles.map((round) => `a circle of imports: ${round.join(' -> ')}`),
  ];
}

export function repoRoot(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

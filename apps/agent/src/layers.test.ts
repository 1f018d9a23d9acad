import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The agent's folders in layers, lowest first (apps/agent/CONTEXT.md): a file imports from its
// own folder or a lower one, never a higher one, and the files import each other without a
// cycle. Tests may import anything; nothing but tests imports testing/. A new folder takes a
// place here.
const LAYERS = ['.', 'progress', 'devices', 'kernels', 'peer', 'runtime', 'taskbag', 'server', 'local', 'import', 'cli', 'testing'];

const SRC = dirname(fileURLToPath(import.meta.url));

const isTest = (file: string) => /\.test(-worker)?\.(ts|mjs)$/.test(file);

function sources(dir: string): string[] {
  return readdirSync(join(SRC, dir), { withFileTypes: true }).flatMap((e) => {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) return e.name === 'fixtures' || e.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative imports of a file (static, dynamic and re-exports), as written and as a path under src/. */
function importsOf(file: string): { spec: string; target: string }[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  const out: { spec: string; target: string }[] = [];
  // A template's variable part (pe-worker-boot.mjs: `../kernels/load${ext}`) ends the path.
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"`])(\.\.?\/[^'"`$]*)/g)) {
    const target = normalize(join(dirname(file), m[2])).replace(/\.js$/, '.ts');
    out.push({ spec: m[2], target });
  }
  return out;
}

const layerOf = (path: string) => (path.includes('/') ? path.slice(0, path.indexOf('/')) : '.');

function problems(files: string[]): string[] {
  const found: string[] = [];
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const from = layerOf(file);
    const edges: string[] = [];
    for (const { spec, target } of importsOf(file)) {
      const to = layerOf(target);
      if (isTest(file) || from === 'testing') continue;
      if (to === 'testing') {
        found.push(`${file} imports ${spec}: only tests import testing/`);
        continue;
      }
      const rank = LAYERS.indexOf(to);
      if (LAYERS.indexOf(from) < 0) found.push(`${file}: folder ${from}/ has no place in LAYERS`);
      else if (rank < 0) found.push(`${file} imports ${spec}: folder ${to}/ has no place in LAYERS`);
      else if (rank > LAYERS.indexOf(from)) found.push(`${file} imports ${spec}: ${from}/ is below ${to}/ (${LAYERS.join(' -> ')})`);
      edges.push(target);
    }
    if (!isTest(file)) graph.set(file, edges);
  }
  // Cycles among the files (tests and testing/ excepted): each found once, by a depth-first walk.
  const state = new Map<string, 'open' | 'done'>();
  const walk = (file: string, path: string[]): void => {
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next) || layerOf(next) === 'testing') continue;
      const chain = [...path, file];
      if (state.get(next) === 'open') found.push(`import cycle: ${[...chain.slice(chain.indexOf(next)), next].join(' -> ')}`);
      else if (!state.has(next)) walk(next, [...path, file]);
    }
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file) && layerOf(file) !== 'testing') walk(file, []);
  return found;
}

describe('the agent layers', () => {
  it('every import goes to its own folder or a lower one, with no cycle; only tests import testing/', () => {
    const files = sources('');
    expect(files.length).toBeGreaterThan(50);
    expect(problems(files)).toEqual([]);
  });
});

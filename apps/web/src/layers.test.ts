import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The designer's folders in layers, lowest first. A file may import its own folder and any
// folder of a lower layer, never one of its own layer or above, so folders cannot form a cycle;
// within a folder, files must not form one either. Tests are held to the same order as code. A
// new folder takes a place here (the test fails until it has one). Files at the root of src
// (main.tsx, App.tsx) mount everything and sit above every layer.
const LAYERS: readonly (readonly string[])[] = [
  // Pure helpers that know nothing of the designer: number and byte formats, colours, canvas
  // sizing, expression text, longest-path depths.
  ['lib'],
  // Pure functions of the written document: its graphs, records, mapping targets, change
  // objects, group/ungroup, port types, diagnostics in the designer's words, reading a file.
  ['document'],
  // Layouts (ELK) of the DFG and the implementation graph, run in the compile worker.
  ['layout'],
  // The compile worker: compile + predict + layout, and its protocol.
  ['worker'],
  // State: the project store and its history, the compile store, the Run view's store, calibration.
  ['store'],
  // Parts the views share: inspector fields, the canvas timeline.
  ['forms', 'timeline'],
  // Views: one per canvas or panel.
  ['arch', 'dfg', 'ig', 'mapping', 'params', 'scan'],
  // Features built of views: the Run view (its timeline, a scan's runs).
  ['run'],
  // The shell: toolbar, inspector, problems, open/save, the Run tab.
  ['shell'],
];

const SRC = dirname(fileURLToPath(import.meta.url));

/** Every .ts/.tsx file under src, relative to it (`store/project.ts`). */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(e.name) ? [relative(SRC, p)] : [];
  });
}

// `import … from '…'`, `export … from '…'`, `import '…'`, `import('…')`, `new URL('…', import.meta.url)`.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*|\bnew\s+URL\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

interface Import {
  file: string;
  /** As written in the file. */
  spec: string;
  /** The file imported, relative to src, with its .ts/.tsx extension where it has one; outside src it starts with `..`. */
  target: string;
}

/** The relative imports of `file` (relative to src) in `text`. */
function importsOf(file: string, text: string, files: ReadonlySet<string>): Import[] {
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = m[1];
    const path = normalize(join(dirname(file), spec));
    const stem = path.replace(/\.js$/, '');
    const target = [`${stem}.ts`, `${stem}.tsx`].find((c) => files.has(c)) ?? path;
    return { file, spec, target };
  });
}

/** The layer of a file (its top folder's), -1 for an unlisted folder, LAYERS.length for src's root files. */
function layerOf(file: string): number {
  const parts = file.split('/');
  if (parts.length === 1) return LAYERS.length;
  return LAYERS.findIndex((l) => l.includes(parts[0]));
}

const folderOf = (file: string) => (file.includes('/') ? file.split('/')[0] : '(src)');

/** Each import against the layer order, as `file: import 'spec' (folder X, layer i) ...`. */
function wrongWay(imports: readonly Import[]): string[] {
  const out: string[] = [];
  for (const i of imports) {
    if (i.target.startsWith('..')) continue;
    const from = folderOf(i.file);
    const to = folderOf(i.target);
    if (from === to) continue;
    const a = layerOf(i.file);
    const b = layerOf(i.target);
    if (b < a && b >= 0) continue;
    out.push(
      `${i.file}: import '${i.spec}' reaches ${to}/ (layer ${b}: ${LAYERS[b]?.join(', ') ?? 'src root'}) from ${from}/ (layer ${a}); a folder imports only folders of a lower layer`,
    );
  }
  return out;
}

/** Import cycles between files, each as `a -> b -> a`. */
function cycles(imports: readonly Import[]): string[] {
  const next = new Map<string, string[]>();
  for (const i of imports) next.set(i.file, [...(next.get(i.file) ?? []), i.target]);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const out: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const t of next.get(f) ?? []) {
      if (state.get(t) === 'open') out.push([...stack.slice(stack.indexOf(t)), t].join(' -> '));
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of [...next.keys()].sort()) if (!state.has(f)) visit(f);
  return out;
}

describe("the designer's layers", () => {
  const files = sourceFiles();
  const known = new Set(files);
  const imports = files.flatMap((f) => importsOf(f, readFileSync(join(SRC, f), 'utf8'), known));

  it('every folder of src has a layer', () => {
    const unlisted = [...new Set(files.filter((f) => layerOf(f) < 0).map(folderOf))];
    expect(unlisted, `give each folder a place in LAYERS (layers.test.ts)`).toEqual([]);
  });

  it('reads the imports it checks', () => {
    // A parser that found nothing would pass everything.
    expect(imports.length).toBeGreaterThan(300);
    expect(imports).toContainEqual({ file: 'store/project.ts', spec: '../document/changes.js', target: 'document/changes.ts' });
    expect(imports).toContainEqual({ file: 'store/compiler.ts', spec: '../worker/compile.worker.ts', target: 'worker/compile.worker.ts' });
  });

  it('no import goes against the layer order', () => {
    expect(wrongWay(imports)).toEqual([]);
  });

  it('no files import each other in a cycle', () => {
    expect(cycles(imports)).toEqual([]);
  });

  it('names the file and the import that goes the wrong way, and a cycle', () => {
    const set = new Set(['lib/format.ts', 'store/project.ts', 'dfg/a.ts', 'dfg/b.ts']);
    const wrong = importsOf('lib/format.ts', "import { projectStore } from '../store/project.js';", set);
    expect(wrongWay(wrong)).toEqual([
      "lib/format.ts: import '../store/project.js' reaches store/ (layer 4: store) from lib/ (layer 0); a folder imports only folders of a lower layer",
    ]);
    const peer = importsOf('dfg/a.ts', "export { x } from '../scan/node.js';", set);
    expect(wrongWay(peer)).toHaveLength(1);
    const loop = [...importsOf('dfg/a.ts', "import './b.js';", set), ...importsOf('dfg/b.ts', "import {\n  a,\n} from './a.js';", set)];
    expect(cycles(loop)).toEqual(['dfg/a.ts -> dfg/b.ts -> dfg/a.ts']);
  });
});

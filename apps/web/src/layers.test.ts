import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, layerViolations } from '../../../scripts/import-graph.js';

// The designer's folders in layers, lowest first. A file may import its own folder and any
// folder of a lower layer, never one of its own layer or above, so folders cannot form a cycle;
// within a folder, files must not form one either. Tests are held to the same order as code. A
// new folder takes a place here (the test fails until it has one). Files at the root of src
// (main.tsx, App.tsx; `.` below) mount everything and sit above every layer.
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
  // src's root: main.tsx and App.tsx.
  ['.'],
];

const graph = importGraph(fileURLToPath(new URL('.', import.meta.url)), { tests: true });

describe("the designer's layers", () => {
  it('reads the imports it checks', () => {
    // A reader that found nothing would pass everything.
    expect(graph.imports.length).toBeGreaterThan(300);
    expect(graph.imports).toContainEqual({ from: 'store/project.ts', to: 'document/changes.ts', spec: '../document/changes.js' });
    expect(graph.imports).toContainEqual({ from: 'store/compiler.ts', to: 'worker/compile.worker.ts', spec: '../worker/compile.worker.ts' });
  });

  it('every folder has a layer; no import goes against the layer order or to a peer of its layer', () => {
    expect(layerViolations(graph, LAYERS, '.')).toEqual([]);
  });

  it('no files import each other in a cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('names the file and the import that goes the wrong way, and a cycle', () => {
    const files = ['lib/format.ts', 'store/project.ts', 'dfg/a.ts', 'dfg/b.ts', 'scan/node.ts'];
    const wrong = { files, packages: [], imports: [{ from: 'lib/format.ts', to: 'store/project.ts', spec: '../store/project.js' }] };
    expect(layerViolations(wrong, LAYERS, '.')).toEqual(["lib/format.ts imports '../store/project.js': lib may not import store (a higher layer: store)"]);
    const peer = { files, packages: [], imports: [{ from: 'dfg/a.ts', to: 'scan/node.ts', spec: '../scan/node.js' }] };
    expect(layerViolations(peer, LAYERS, '.')).toEqual([
      "dfg/a.ts imports '../scan/node.js': dfg may not import scan (the same layer: arch, dfg, ig, mapping, params, scan)",
    ]);
    const loop = {
      files,
      packages: [],
      imports: [
        { from: 'dfg/a.ts', to: 'dfg/b.ts', spec: './b.js' },
        { from: 'dfg/b.ts', to: 'dfg/a.ts', spec: './a.js' },
      ],
    };
    expect(importCycles(loop)).toEqual(['dfg/a.ts -> dfg/b.ts -> dfg/a.ts (2 files in the cycle)']);
  });
});

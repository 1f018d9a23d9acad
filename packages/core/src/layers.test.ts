import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, layerViolations } from '../../../scripts/import-graph.js';

// Core's layers, lowest first: a file may import its own layer and the ones before it, never a
// later one, and no file may import itself back through others. A new folder takes a place here
// (CONTEXT.md lists the same order, one line per layer). Test files are left out: a test may use
// any layer to build what it checks. Type-only imports count.
const CORE_LAYERS = [
  'ids.ts',
  'diagnostics.ts',
  'util',
  'scan',
  'document',
  'compile',
  'trace',
  'predict',
  'kernels.ts',
  'run',
  'index.ts',
  'robustness',
  'testing',
] as const;

const graph = importGraph(fileURLToPath(new URL('.', import.meta.url)));

describe("core's layers", () => {
  it('no import goes against the layer order or out of the package', () => {
    expect(layerViolations(graph, CORE_LAYERS)).toEqual([]);
  });

  it('no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });
});

import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, layerViolations } from '../../../scripts/import-graph.js';

// The agent's folders in layers, lowest first (apps/agent/CONTEXT.md): a file imports from its
// own folder or a lower one, never a higher one, and the files import each other without a
// cycle. `.` is the files at src's root. testing/ is the top layer, so nothing but tests (left
// out of the graph: a test may import anything) imports it. A new folder takes a place here.
const LAYERS = ['.', 'progress', 'devices', 'kernels', 'io', 'peer', 'runtime', 'taskbag', 'server', 'local', 'import', 'cli', 'testing'];

const graph = importGraph(fileURLToPath(new URL('.', import.meta.url)));

describe('the agent layers', () => {
  it('reads the imports it checks', () => {
    // A reader that found nothing would pass everything.
    expect(graph.imports.length).toBeGreaterThan(150);
    expect(graph.imports).toContainEqual({ from: 'runtime/pe-worker-boot.mjs', to: 'kernels/load', spec: '../kernels/load' });
  });

  it('every import goes to its own folder or a lower one; only tests import testing/', () => {
    expect(layerViolations(graph, LAYERS, '.')).toEqual([]);
  });

  it('no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });
});

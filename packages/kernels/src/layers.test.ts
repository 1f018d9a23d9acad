import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from '../../../scripts/import-graph.js';

// The kernels package has no folder order (each family folder sits on the shared modules), but
// no module may import itself back through others, and none reaches outside the package: the
// specs entry must load alone in the web app's worker. Test files are left out; type-only
// imports count.
const graph = importGraph(fileURLToPath(new URL('.', import.meta.url)));

describe("kernels' imports", () => {
  it('no import cycle', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it('no import out of the package', () => {
    expect(graph.imports.filter((i) => i.to.startsWith('../')).map((i) => `${i.from} imports '${i.spec}'`)).toEqual([]);
  });
});

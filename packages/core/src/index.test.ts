import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadedModules } from '@pipeloom/kernels/testing/loaded-modules';

// Core's index is what the web app bundles into its worker and page: it must load nothing
// Node-only, not the test documents, and from the kernels only their specs (no WGSL sources,
// no image decoder).
const repo = fileURLToPath(new URL('../../../', import.meta.url));

describe("core's index (@pipeloom/core)", () => {
  it('loads no Node builtin, no core/testing module and no kernel implementation', async () => {
    const urls = await loadedModules(fileURLToPath(new URL('./index.ts', import.meta.url)), repo);
    const files = urls.filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u).slice(repo.length));
    expect(files).toContain('packages/core/src/run/coordinator.ts');
    expect(urls.filter((u) => u.startsWith('node:'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('packages/core/src/testing/'))).toEqual([]);
    const kernels = files.filter((f) => f.startsWith('packages/kernels/'));
    expect(kernels).toContain('packages/kernels/src/specs.ts');
    expect(kernels.filter((f) => !/^packages\/kernels\/src\/(specs|types|random|definition|binary|binary-modes|[a-z0-9]+\/spec)\.ts$/.test(f))).toEqual([]);
  }, 60_000);

  it('while @pipeloom/core/testing loads node:fs (the check sees what it looks for)', async () => {
    const urls = await loadedModules(fileURLToPath(new URL('./testing/index.ts', import.meta.url)), repo);
    expect(urls).toContain('node:fs');
  }, 60_000);
});

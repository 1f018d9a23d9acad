import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findKernel, listKernels } from './specs.js';
import { getKernel } from './registry.js';
import { loadedModules } from './testing/loaded-modules.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The files of packages/kernels/src that importing `entry` loads, with their text. */
async function loaded(entry: string): Promise<{ file: string; text: string }[]> {
  const urls = await loadedModules(fileURLToPath(new URL(entry, import.meta.url)), repo);
  return urls
    .filter((u) => u.startsWith('file:') && u.includes('/packages/kernels/src/'))
    .map((u) => fileURLToPath(u))
    .map((file) => ({ file: file.slice(file.indexOf('/packages/kernels/src/') + '/packages/kernels/src/'.length), text: readFileSync(file, 'utf8') }));
}

// What marks a module as WGSL source (tagged or templated shader text) or WebGPU plumbing, and
// as the PNG/PGM decoder. The custom kernel's example module is a param default with a literal
// workgroup size, so it is not taken for a shader this package compiles.
const WGSL = /\/\* wgsl \*\/|createShaderModule|@workgroup_size\(\$\{/;
const DECODER = /export (async )?function decode(Png|Pgm|Image)\b/;

describe('the specs entry (@pipeloom/kernels/specs)', () => {
  it('loads no WGSL source module and no image decoder', async () => {
    const files = await loaded('./specs.ts');
    expect(files.map((f) => f.file)).toContain('matrix/spec.ts');
    expect(files.filter((f) => WGSL.test(f.text)).map((f) => f.file)).toEqual([]);
    expect(files.filter((f) => DECODER.test(f.text)).map((f) => f.file)).toEqual([]);
  }, 60_000);

  it('while the full entry loads both (the check sees what it looks for)', async () => {
    const files = await loaded('./index.ts');
    expect(files.filter((f) => WGSL.test(f.text)).map((f) => f.file)).toEqual(
      expect.arrayContaining(['saliency/wgsl.ts', 'matrix/index.ts', 'gpu/pipeline.ts']),
    );
    expect(files.filter((f) => DECODER.test(f.text)).map((f) => f.file)).toEqual(['saliency/image-file.ts']);
  }, 60_000);

  it('has a spec for every kernel, the same one the implementation carries', () => {
    for (const spec of listKernels()) {
      const k = getKernel(spec.id);
      expect(findKernel(spec.id)).toBe(spec);
      for (const field of ['title', 'params', 'inputs', 'outputs', 'cost'] as const) expect(k[field], `${spec.id}.${field}`).toBe(spec[field]);
      expect(k.cpu, spec.id).toBeTypeOf('function');
      expect('cpu' in spec || 'gpu' in spec, spec.id).toBe(false);
    }
  });
});

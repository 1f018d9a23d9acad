import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { findKernel, listKernels } from './specs.js';
import { getKernel } from './registry.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'pipeloom-specs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A module.register hook that writes every URL the loader resolves to a file: the modules an
// entry really loads, whatever imports them, in a fresh Node process (tsx compiles the .ts).
writeFileSync(
  join(dir, 'hooks.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.RESOLVED_LOG, r.url + '\\n');
  return r;
}`,
);
writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`);

/** The files of packages/kernels/src that importing `entry` loads, with their text. */
async function loaded(entry: string, name: string): Promise<{ file: string; text: string }[]> {
  const log = join(dir, `${name}.log`);
  writeFileSync(log, '');
  const url = pathToFileURL(join(repo, 'packages/kernels/src', entry)).href;
  await run(process.execPath, ['--import', 'tsx', '--import', pathToFileURL(join(dir, 'register.mjs')).href, '--input-type=module', '-e', `await import(${JSON.stringify(url)});`], {
    cwd: repo,
    env: { ...process.env, RESOLVED_LOG: log },
  });
  const urls = [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))];
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
    const files = await loaded('specs.ts', 'specs');
    expect(files.map((f) => f.file)).toContain('matrix/spec.ts');
    expect(files.filter((f) => WGSL.test(f.text)).map((f) => f.file)).toEqual([]);
    expect(files.filter((f) => DECODER.test(f.text)).map((f) => f.file)).toEqual([]);
  }, 60_000);

  it('while the full entry loads both (the check sees what it looks for)', async () => {
    const files = await loaded('index.ts', 'index');
    expect(files.filter((f) => WGSL.test(f.text)).map((f) => f.file)).toEqual(expect.arrayContaining(['saliency/wgsl.ts', 'matrix/index.ts', 'gpu/pipeline.ts']));
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

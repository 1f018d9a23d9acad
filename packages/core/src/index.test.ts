import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSync } from 'vite';
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

// The public surface is what core's consumers use: the agent, the web app, the scripts and the
// examples' kernels (their product code, not their tests or benches). A value they stop using
// leaves the index, unless it is kept here with the reason.
const KEPT: Record<string, string> = {};
// Types no consumer names but the published declarations of the agent do (its inferred types
// reach them through core's public ones): a type in an exported signature must be nameable.
const IN_SIGNATURES: Record<string, string> = {
  NodeId: "ImplementationGraph's node keys, in the agent's compile JSON and PE state",
  BufferAccess: "Action's reads and writes, in the agent's PE state",
  PhaseTime: "StrategyPrediction's phases, in the agent's predict JSON",
};

/** Folders outside core that import it; a file there is a test's or a bench's by its path. */
const CONSUMERS = ['apps/agent', 'apps/web', 'e2e', 'scripts', 'examples/kernels', 'packages/kernels'];
const isTestOrBench = (file: string) => /\.(test|spec|bench)\.|(^|\/)(testing|bench)\/|^e2e\//.test(file);

interface Use {
  name: string;
  entry: string;
  file: string;
}

/** Every name a consumer file imports (or re-exports) from one of core's entries. */
function consumerUses(): Use[] {
  const uses: Use[] = [];
  const files = (dir: string): string[] =>
    readdirSync(join(repo, dir), { withFileTypes: true }).flatMap((e) => {
      if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) return [];
      const path = `${dir}/${e.name}`;
      return e.isDirectory() ? files(path) : /\.(ts|tsx|mjs|js)$/.test(e.name) ? [path] : [];
    });
  for (const file of CONSUMERS.flatMap(files)) {
    const text = readFileSync(join(repo, file), 'utf8');
    if (!text.includes('@pipeloom/core')) continue;
    const { module } = parseSync(file, text);
    const entries = [
      ...module.staticImports.flatMap((i) => i.entries.map((e) => ({ entry: i.moduleRequest.value, kind: e.importName.kind, name: e.importName.name }))),
      ...module.staticExports.flatMap((x) =>
        x.entries.filter((e) => e.moduleRequest).map((e) => ({ entry: e.moduleRequest!.value, kind: e.importName.kind, name: e.importName.name })),
      ),
    ];
    for (const e of entries) {
      if (!e.entry.startsWith('@pipeloom/core')) continue;
      // A namespace import would use every name at once: consumers name what they use.
      if (e.kind !== 'Name' || !e.name) throw new Error(`${file} imports ${e.entry} other than by name`);
      uses.push({ name: e.name, entry: e.entry, file });
    }
    // Types named inline: import('@pipeloom/core').ActionPlan.
    for (const m of text.matchAll(/import\(\s*['"](@pipeloom\/core[\w/]*)['"]\s*\)\.(\w+)/g)) uses.push({ name: m[2], entry: m[1], file });
  }
  return uses;
}

/** The names an entry exports as written in it: each one, whether a type, and the name it is defined by. */
function entryExports(file: string) {
  const { module } = parseSync(file, readFileSync(fileURLToPath(new URL(file, import.meta.url)), 'utf8'));
  return module.staticExports.flatMap((x) =>
    x.entries.map((e) => ({ name: e.exportName.name ?? `* from ${e.moduleRequest?.value}`, type: e.isType, defined: e.importName.name ?? e.localName.name })),
  );
}

describe("core's public surface is what its consumers use", () => {
  const uses = consumerUses();
  const product = new Set(uses.filter((u) => u.entry === '@pipeloom/core' && !isTestOrBench(u.file)).map((u) => u.name));
  const anywhere = new Set(uses.filter((u) => u.entry === '@pipeloom/core').map((u) => u.name));
  const internalUses = new Set(uses.filter((u) => u.entry === '@pipeloom/core/internal').map((u) => u.name));

  it('the index and @pipeloom/core/internal list every name, each as it is defined (no `export *`, no `as`)', () => {
    for (const entry of ['./index.ts', './testing/internal.ts']) {
      const names = entryExports(entry);
      expect(names.length, entry).toBeGreaterThan(0);
      expect(
        names.filter((n) => n.name !== n.defined).map((n) => `${n.name} (defined as ${n.defined})`),
        entry,
      ).toEqual([]);
    }
  });

  it('every value the index exports is used by a consumer outside tests and benches, or kept with a reason', async () => {
    const values = Object.keys(await import('./index.js'));
    expect(values).toContain('compile');
    expect(values.filter((n) => !product.has(n) && !(n in KEPT))).toEqual([]);
    // A kept value that a consumer has started to use, or that is gone, leaves the list.
    expect(Object.keys(KEPT).filter((n) => product.has(n) || !values.includes(n))).toEqual([]);
  });

  it('every type the index exports is used by a consumer, or named in what consumers use', () => {
    const types = entryExports('./index.ts').filter((n) => n.type);
    expect(types.map((n) => n.name)).toContain('ProjectDocument');
    expect(types.filter((n) => !anywhere.has(n.name) && !(n.name in IN_SIGNATURES)).map((n) => n.name)).toEqual([]);
    expect(Object.keys(IN_SIGNATURES).filter((n) => anywhere.has(n) || !types.some((t) => t.name === n))).toEqual([]);
  });

  it('@pipeloom/core/internal holds what tests and benches outside core use of the rest, and only they import it', () => {
    const names = entryExports('./testing/internal.ts').map((n) => n.name);
    const index = new Set(entryExports('./index.ts').map((n) => n.name));
    expect(names.filter((n) => index.has(n))).toEqual([]);
    expect(names.filter((n) => !internalUses.has(n))).toEqual([]);
    const outside = uses.filter((u) => u.entry !== '@pipeloom/core' && !isTestOrBench(u.file)).map((u) => `${u.file}: ${u.name} from ${u.entry}`);
    expect(outside).toEqual([]);
  });

  it('only the index is published: the other entries lie in testing/, which the build and pack leave out', () => {
    const { exports } = JSON.parse(readFileSync(join(repo, 'packages/core/package.json'), 'utf8')) as { exports: Record<string, string> };
    expect(exports['.']).toBe('./src/index.ts');
    expect(exports['./internal']).toBe('./src/testing/internal.ts');
    expect(Object.entries(exports).filter(([k, v]) => k !== '.' && !v.startsWith('./src/testing/'))).toEqual([]);
    expect(readFileSync(join(repo, 'tsconfig.build.json'), 'utf8')).toContain('"**/testing/**"');
    expect(readFileSync(join(repo, 'scripts/pack.mjs'), 'utf8')).toContain(`v.includes('/testing/')`);
  });
});

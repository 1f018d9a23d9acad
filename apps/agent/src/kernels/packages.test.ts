import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerKernels, findKernel, type KernelManifest } from '@pipeloom/kernels';
import { spawnLocalAgents } from '../local/spawn.js';
import { compileOrThrow, connect, example, pipeloomAsync, root } from '../testing/fixtures.js';
import { loadKernelPackages } from './load.js';

// Kernel packages with real processes: a package copied to a temporary folder (as an operator
// would install one), listed by `pipeloom kernels`, run end to end by `pipeloom run` on two
// local agent processes that load it; and each bad package refused with exit 2 and a message
// naming the package, the kernel and the fix.

const pipeloom = pipeloomAsync;

let dir: string;
let image: string;
/** A package folder in the temporary dir holding `index.mjs` with `source`. */
function pkg(name: string, source: string): string {
  const at = join(dir, name);
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'index.mjs'), source);
  return at;
}

/** P (vector.produce) -> K (`kernel`, a package's copy) -> C (vector.check) on one host's CPU and GPU. */
const copyDocument = (kernel: string) => ({
  format: 'pipeloom/v2',
  name: 'acme copy',
  app: {
    nodes: [
      { id: 'P', kernel: 'vector.produce', params: { length: 1000 } },
      { id: 'K', kernel, params: { n: 1000 } },
      { id: 'C', kernel: 'vector.check', params: { length: 1000, scale: 1, offset: 0 } },
    ],
    edges: [
      { from: { node: 'P', port: 'out' }, to: { node: 'K', port: 'in' } },
      { from: { node: 'K', port: 'out' }, to: { node: 'C', port: 'in' } },
    ],
  },
  arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 1, pcie: { bandwidth: 5e9, latency: 1e-5 } }] },
  mapping: { P: 'cpu@h0', K: 'gpu0@h0', C: 'cpu@h0' },
});

// A kernel in plain JavaScript (a published package would ship built JS), WGSL bound in port order.
const KERNEL = (id: string, wgsl: string, version = '2.0.0') => `import { defineKernel } from '@pipeloom/kernels';
const vec = (p) => ({ kind: 'vector', element: 'f32', shape: [Number(p.n)] });
export const k = defineKernel({
  id: '${id}', version: '${version}', description: 'copies its input',
  params: { n: { type: 'int', default: 8, min: 1, max: 1000, description: 'elements' } },
  inputs: [{ name: 'in', type: vec }], outputs: [{ name: 'out', type: vec }],
  cost: (p) => ({ flops: 0, bytes: 8 * Number(p.n) }),
  cpu: ({ inputs, outputs }) => outputs.out.set(inputs.in),
  gpu: { source: \`${wgsl}\`, passes: [{ threads: (p) => Number(p.n) }] },
});
`;
const COPY = `@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < arrayLength(&b)) { b[gid.x] = a[gid.x]; }
}`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pipeloom-kernels-'));
  // No node_modules here: the agent and the CLI give a package their own @pipeloom/kernels.
  image = join(dir, 'image');
  cpSync(join(root, 'examples/kernels/image'), image, { recursive: true, filter: (f) => !f.endsWith('.test.ts') });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a kernel package in a temporary folder', () => {
  it('is listed by pipeloom kernels with ports, params and docs, grouped under its path', async () => {
    const r = await pipeloom('kernels', '--kernels', image, '--format', 'json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const list = JSON.parse(r.stdout) as KernelManifest[];
    const read = list.find((k) => k.id === 'image.read')!;
    expect(read).toMatchObject({ version: '1.0.0', package: image, title: 'Read YUV frame', cpu: true, gpu: true });
    expect(read.outputs.map((p) => `${p.name}: ${p.type}`)).toEqual(['y: image<f32>[240x320]', 'u: image<f32>[120x160]', 'v: image<f32>[120x160]']);
    expect(list.find((k) => k.id === 'image.display')!.inputs).toEqual([
      { name: 'in', description: 'An image', type: 'image<f32>[240x320]', repeat: 'inputs' },
    ]);
    expect(list.find((k) => k.id === 'matrix.add')!.package).toBe('builtin');
    const text = await pipeloom('kernels', '--kernels', image);
    expect(text.stdout).toContain(`${image}:\n  image.read 1.0.0  Read YUV frame`);
  });

  for (const [strategy, sync] of [
    ['--overlap', 'self-timed'],
    ['--no-overlap', 'barrier'],
    ['--overlap', 'barrier'],
    ['--no-overlap', 'self-timed'],
  ] as const) {
    it(`runs examples/sobel.json on two local agents that load it (${strategy}, ${sync}): the display's check of every frame passes`, async () => {
      const r = await pipeloom('run', 'examples/sobel.json', '--kernels', image, '--iterations', '6', strategy, '--sync', sync);
      expect(r.stderr).toContain('started 2 local agent(s)');
      expect(r.stdout).toContain('run complete');
      expect(r.status).toBe(0);
    }, 120_000);
  }

  it('a miswired document (u and v swapped into the display) fails the run, naming host, node and iteration', async () => {
    const doc = example('sobel');
    doc.app.edges[4].from.port = 'v';
    doc.app.edges[5].from.port = 'u';
    const file = join(dir, 'swapped.json');
    writeFileSync(file, JSON.stringify(doc));
    const r = await pipeloom('run', file, '--kernels', image, '--iterations', '3');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/failed on host h1, node display, iteration 0: iteration 0: in1\[\d+\] is .*, expected/);
  }, 120_000);

  it('a TypeScript package anywhere on disk, with a dependency of its own and its WGSL in a file beside its code, runs', async () => {
    const at = join(dir, 'acme-ts');
    mkdirSync(join(at, 'src'), { recursive: true });
    mkdirSync(join(at, 'node_modules/acme-sizes'), { recursive: true });
    writeFileSync(join(at, 'package.json'), JSON.stringify({ name: 'acme-ts', type: 'module', main: 'src/index.ts', dependencies: { 'acme-sizes': '1.0.0' } }));
    writeFileSync(join(at, 'node_modules/acme-sizes/package.json'), JSON.stringify({ name: 'acme-sizes', type: 'module', exports: './index.js' }));
    writeFileSync(join(at, 'node_modules/acme-sizes/index.js'), 'export const elements = (p) => Number(p.n);\n');
    writeFileSync(join(at, 'src/copy.wgsl'), COPY);
    writeFileSync(
      join(at, 'src/types.ts'),
      `import { elements } from 'acme-sizes';\nexport const vec = (p: Record<string, unknown>) => ({ kind: 'vector' as const, element: 'f32' as const, shape: [elements(p)] });\n`,
    );
    writeFileSync(
      join(at, 'src/index.ts'),
      KERNEL('acme.tscopy', '${wgsl}')
        .replace(
          "import { defineKernel } from '@pipeloom/kernels';",
          `import { readFileSync } from 'node:fs';\nimport { defineKernel } from '@pipeloom/kernels';\nimport { vec } from './types.js';\nconst wgsl: string = readFileSync(new URL('./copy.wgsl', import.meta.url), 'utf8');`,
        )
        .replace(/const vec = .*\n/, ''),
    );
    const file = join(dir, 'acme-ts.json');
    writeFileSync(file, JSON.stringify(copyDocument('acme.tscopy')));
    const r = await pipeloom('run', file, '--kernels', at, '--iterations', '3');
    expect(r.stderr).not.toContain('kernel package');
    expect(r.stdout).toContain('run complete');
    expect(r.status).toBe(0);
  }, 120_000);

  it('an agent without the package refuses the deploy before allocating, naming host, node, kernel and the flag', async () => {
    // This process compiles with the package; the agents were started without it.
    if (!findKernel('image.read')) expect((await loadKernelPackages([image])).problems).toEqual([]);
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 } });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const r = await c.run(compileOrThrow(example('sobel'), true), { iterations: 2 }).done;
      c.close();
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toMatch(/agent h[01] has no kernel "image\.\w+" \(node "\w+"\): start it with --kernels naming the package that defines it/);
      expect(r.events.filter((e) => e.kind === 'fire')).toEqual([]);
    } finally {
      await local.stop();
    }
  }, 120_000);
});

describe('bad kernel packages: exit 2, naming the package, the kernel and the fix', () => {
  it('a package that fails to load: its path and the error', async () => {
    const bad = pkg('broken', 'export const k = {;\n');
    const r = await pipeloom('compile', 'examples/piic.json', '--kernels', bad);
    expect(r.status).toBe(2);
    // Where the error is, in the package's own file.
    expect(r.stderr).toContain(`pipeloom compile: kernel package ${bad} (${join(bad, 'index.mjs')}) failed to load: ${join(bad, 'index.mjs')}:1:19:`);
    // pipeloom kernels names it and lists nothing: a list without the package would read as complete.
    const listed = await pipeloom('kernels', '--kernels', bad);
    expect(listed.status).toBe(2);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toContain(`pipeloom kernels: kernel package ${bad}`);
    const missing = await pipeloom('predict', 'examples/piic.json', '--kernels', join(dir, 'nope'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(`pipeloom predict: kernel package ${join(dir, 'nope')}: no such file or folder\n`);
    const npm = await pipeloom('compile', 'examples/piic.json', '--kernels', 'pipeloom-no-such-package');
    expect(npm.status).toBe(2);
    expect(npm.stderr).toMatch(
      /kernel package pipeloom-no-such-package: is not a file and not an installed package .*; install it \(npm install pipeloom-no-such-package\) or give its path/,
    );
  });

  it('two packages defining one id: both named', async () => {
    const copy = join(dir, 'image-copy');
    cpSync(image, copy, { recursive: true });
    const r = await pipeloom('kernels', '--kernels', image, '--kernels', copy);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      `pipeloom kernels: kernel package ${copy}: kernel "image.read": is defined by both ${image} and ${copy} (load only one of them, or rename one kernel)`,
    );
  });

  it('WGSL that does not compile: the kernel and the line, from pipeloom kernels --check and from an agent at start', async () => {
    const p = pkg('nocompile', KERNEL('bad.compile', COPY.replace('b[gid.x] = a[gid.x];', 'b[gid.x] = a[gid.x] + nope;')));
    const r = await pipeloom('kernels', '--kernels', p, '--check');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /pipeloom kernels: kernel package .*nocompile: kernel "bad.compile": WGSL module "main" does not compile: .*nope.* \(line 4, column \d+\)/,
    );
    const agent = await pipeloom('agent', '--name', 'h0', '--port', '0', '--token', 'x'.repeat(32), '--kernels', p);
    expect(agent.status).toBe(2);
    expect(agent.stderr).toMatch(
      /pipeloom agent: kernel package .*nocompile: kernel "bad.compile": WGSL module "main" does not compile: .*\(line 4, column \d+\)/,
    );
  });

  it('bindings that do not match the declared ports', async () => {
    const p = pkg('bindings', KERNEL('bad.bindings', COPY.replace('@binding(1) var<storage, read_write> b', '@binding(2) var<storage, read_write> b')));
    const r = await pipeloom('compile', 'examples/piic.json', '--kernels', p);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      'kernel "bad.bindings" gpu.source: bindings do not match the declared ports: binding 1 (output "out") is missing: declare @group(0) @binding(1) var<storage, read_write>; @group(0) @binding(2) "b" (line 2) matches no declared port',
    );
  });

  it('a port type function that throws for some params: the kernel and the params', async () => {
    const p = pkg(
      'throws',
      KERNEL('bad.type', COPY).replace(
        "outputs: [{ name: 'out', type: vec }]",
        "outputs: [{ name: 'out', type: (p) => { if (Number(p.n) > 500) throw new Error('n above 500'); return vec(p); } }]",
      ),
    );
    const r = await pipeloom('kernels', '--kernels', p);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('kernel "bad.type" outputs.out.type: throws (n above 500) for params {"n":1000}');
  });

  it('an unknown kernel: the nearest ids and the flag that loads packages', async () => {
    const doc = example('sobel');
    doc.app.nodes[1].kernel = 'image.sobl';
    const file = join(dir, 'typo.json');
    writeFileSync(file, JSON.stringify(doc));
    const r = await pipeloom('compile', file, '--kernels', image);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('app.nodes[1].kernel: unknown kernel "image.sobl" (nearest registered: image.sobel,');
  });

  it('another major version on an agent, or no such kernel there: refused before deploying, naming node, kernel, versions, host and the agents that have it', async () => {
    const v1 = pkg('acme-v1', KERNEL('acme.copy', COPY, '1.4.0'));
    const v2 = pkg('acme-v2', KERNEL('acme.copy', COPY, '2.0.0'));
    const doc = copyDocument('acme.copy');
    const file = join(dir, 'acme.json');
    writeFileSync(file, JSON.stringify(doc));
    const token = 'k'.repeat(32);
    const run = (agents: { url: string }[], ...flags: string[]) =>
      pipeloom('run', file, '--agents', agents.map((a) => a.url).join(','), '--token', token, '--iterations', '2', ...flags);
    // The agents of the three cases, started together: the same package as the CLI, another
    // major version, and h0 lacking it while h1 has it.
    const started = await Promise.allSettled([
      spawnLocalAgents(['h0'], { gpus: { h0: 1 }, token, args: ['--kernels', v1] }),
      spawnLocalAgents(['h0'], { gpus: { h0: 1 }, token, args: ['--kernels', v2] }),
      spawnLocalAgents(['h0'], { gpus: { h0: 1 }, token }),
      spawnLocalAgents(['h1'], { token, args: ['--kernels', v1] }),
    ]);
    const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      const [same, newer, lacking, having] = up;
      // The same package on both sides runs (the baseline of this test).
      const r = await run(same.agents, '--kernels', v1);
      expect(r.stdout).toContain('run complete');
      expect(r.status).toBe(0);
      const major = await run(newer.agents, '--kernels', v1);
      expect(major.status).toBe(2);
      expect(major.stderr).toMatch(
        /mapping\.K: node "K" was compiled with kernel acme\.copy 1\.4\.0, but agent h0 \(ws:\/\/[\d.:]+\) has 2\.0\.0 \(from .*acme-v2\), another major version \(load acme\.copy 1\.x on h0 \(--kernels\), or compile with the package the agents have\)/,
      );
      // h0 lacks it, h1 has it: the refusal says which agent does.
      const lacks = await run([...lacking.agents, ...having.agents], '--kernels', v1);
      expect(lacks.status).toBe(2);
      expect(lacks.stderr).toMatch(
        /mapping\.K: node "K" needs kernel acme\.copy 1\.4\.0, but agent h0 \(ws:\/\/[\d.:]+\) does not have it; agents that have it: h1 \(1\.4\.0\) \(start agent h0 with --kernels naming the package that defines acme\.copy, or map "K" to a host whose agent has it\)/,
      );
    } finally {
      await Promise.all(up.map((a) => a.stop()));
    }
  }, 120_000);

  it('an agent with another major version refuses the deploy itself (a coordinator that did not check): node, kernel, both versions, host', async () => {
    const v1 = pkg('acme-agent-v1', KERNEL('acme.copy1', COPY, '1.4.0'));
    const v2 = pkg('acme-agent-v2', KERNEL('acme.copy1', COPY, '2.0.0'));
    // This process compiles against 1.4.0 (the deploy says so); the agent has 2.0.0.
    expect((await loadKernelPackages([v1])).problems).toEqual([]);
    const doc = copyDocument('acme.copy1') as unknown as Parameters<typeof compileOrThrow>[0];
    const local = await spawnLocalAgents(['h0'], { gpus: { h0: 1 }, args: ['--kernels', v2] });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const r = await c.run(compileOrThrow(doc, true), { iterations: 2 }).done;
      c.close();
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toContain('agent h0 has kernel "acme.copy1" 2.0.0, but node "K" was compiled against 1.4.0 (another major version)');
      expect(r.events.filter((e) => e.kind === 'fire')).toEqual([]);
    } finally {
      await local.stop();
    }
  }, 120_000);

  it('an unknown kernel that the agents have: the diagnostic, then which agents have it and the flag', async () => {
    const token = 'u'.repeat(32);
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 }, token, args: ['--kernels', image] });
    try {
      const r = await pipeloom('run', 'examples/sobel.json', '--agents', local.agents.map((a) => a.url).join(','), '--token', token, '--iterations', '2');
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('app.nodes[1].kernel: unknown kernel "image.sobel" (nearest registered:');
      expect(r.stderr).toContain(
        `kernels: image.sobel is on agents h0 (1.0.0 from ${image}), h1 (1.0.0 from ${image}) (load its package here too: --kernels PATH_OR_PACKAGE)`,
      );
    } finally {
      await local.stop();
    }
  }, 120_000);

  it('registering a kernel id twice in one process names both packages (the registry, without processes)', () => {
    const k = { ...findKernel('matrix.add')! };
    expect(registerKernels([k], 'acme')).toEqual([
      { kernel: 'matrix.add', path: '', message: 'is defined by both builtin and acme', hint: 'load only one of them, or rename one kernel' },
    ]);
  });
});

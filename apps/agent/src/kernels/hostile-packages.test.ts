import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProjectDocument } from '@pipeloom/core';
import { spawnLocalAgents } from '../local/spawn.js';
import { bagGraphOrThrow, compileOrThrow, connect, pipeloomAsync as pipeloom, root } from '../testing/fixtures.js';
import { loadKernelPackages } from './load.js';

// Kernel packages whose code loops or never settles, with real processes: each is named with
// what it was doing and the limit (exit 2), never a silent hang; and an agent whose package
// kernel loops for one param value keeps answering /healthz and logins while the package
// thread runs it, then refuses that deploy naming package, kernel, function and params.

let dir: string;
/** A package folder in the temporary dir holding `index.mjs` with `source`. */
function pkg(name: string, source: string): string {
  const at = join(dir, name);
  mkdirSync(at, { recursive: true });
  writeFileSync(join(at, 'index.mjs'), source);
  return at;
}

/** acme.loopy: one output of n f32; `type` and `cpu` are the bodies of its port type function and CPU twin, before they return. */
const LOOPY = (type: string, cpu = '') => `import { existsSync, writeFileSync } from 'node:fs';
import { defineKernel } from '@pipeloom/kernels';
export const k = defineKernel({
  id: 'acme.loopy', version: '1.0.0', description: 'fills its output with ones',
  params: { n: { type: 'int', default: 8, min: 1, max: 1000, description: 'elements' } },
  outputs: [{ name: 'out', type: (p) => { ${type}; return { kind: 'vector', element: 'f32', shape: [Number(p.n)] }; } }],
  cost: (p) => ({ flops: 0, bytes: 4 * Number(p.n) }),
  cpu: ({ params: p, outputs }) => { ${cpu}; outputs.out.fill(1); },
});
`;

/** One acme.loopy node with `n` elements on h0's CPU, as a task-bag run. */
function loopyDocument(n: number): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: 'loopy',
    app: { nodes: [{ id: 'K', kernel: 'acme.loopy', params: { n } }], edges: [] },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 0 }] },
    mapping: { K: 'cpu@h0' },
    options: { overlap: false, iterations: 1, mode: 'taskbag' },
  } as unknown as ProjectDocument;
}

/** P -> C over a delayed edge whose initial token acme.loopy (n = 779) makes, on the agent, before the run. */
const initDocument = () =>
  ({
    format: 'pipeloom/v2',
    name: 'loopy initial token',
    app: {
      nodes: [
        { id: 'S', kernel: 'acme.loopy', params: { n: 779 } },
        { id: 'P', kernel: 'vector.produce', params: { length: 779 } },
        { id: 'C', kernel: 'vector.check', params: { length: 779, scale: 1, offset: 0 } },
      ],
      edges: [{ from: { node: 'P', port: 'out' }, to: { node: 'C', port: 'in' }, delay: 1, init: { node: 'S' } }],
    },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 0 }] },
    mapping: { P: 'cpu@h0', C: 'cpu@h0' },
  }) as unknown as ProjectDocument;

const graphOf = bagGraphOrThrow;

async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 20));
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pipeloom-hostile-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a package that hangs at start: exit 2 naming it, what it was doing and the limit', () => {
  it('a loop at import, a top-level await that never settles, a type function that always loops: pipeloom agent, kernels, compile, predict and run', async () => {
    const loop = pkg('loop-import', 'for (;;) {}\n');
    const never = pkg('never-settles', 'await new Promise(() => {});\nexport const k = 1;\n');
    const always = pkg('type-loops', LOOPY('for (;;) {}'));
    // Not made with defineKernel: the loader's own check of its types is what loops.
    const plain = pkg(
      'plain-loops',
      `export const k = { id: 'acme.plain', version: '1.0.0', title: 'plain', category: 'acme', description: 'loops', params: {}, inputs: [],
  outputs: [{ name: 'out', type: () => { for (;;) {} } }], cost: () => ({ flops: 0, bytes: 0 }), cpu: () => {} };\n`,
    );
    const limit = ['--kernel-load-timeout', '2'];
    const importing = (p: string) =>
      `kernel package ${p}: importing it did not finish within 2 s (its top-level code loops or awaits something that never settles;`;
    const [agentLoop, agentNever, kernelsAlways, compileLoop, predictNever, runLoop, plainAgent] = await Promise.all([
      pipeloom('agent', '--name', 'h0', '--port', '0', '--token', 'x'.repeat(32), '--kernels', loop, ...limit),
      pipeloom('agent', '--name', 'h0', '--port', '0', '--token', 'x'.repeat(32), '--kernels', never, ...limit),
      pipeloom('kernels', '--kernels', always, ...limit),
      pipeloom('compile', 'examples/piic.json', '--kernels', loop, ...limit),
      pipeloom('predict', 'examples/piic.json', '--kernels', never, ...limit),
      pipeloom('run', 'examples/piic.json', '--kernels', loop, ...limit),
      pipeloom('agent', '--name', 'h0', '--port', '0', '--token', 'x'.repeat(32), '--kernels', plain, ...limit),
    ]);
    for (const [r, command, p] of [
      [agentLoop, 'agent', loop],
      [agentNever, 'agent', never],
      [kernelsAlways, 'kernels', always],
      [compileLoop, 'compile', loop],
      [predictNever, 'predict', never],
      [runLoop, 'run', loop],
    ] as const) {
      expect(r.stderr).toContain(`pipeloom ${command}: ${importing(p)}`);
      expect(r.stderr).toContain('raise the limit with --kernel-load-timeout SECONDS');
      expect(r.status).toBe(2);
    }
    expect(plainAgent.stderr).toContain(
      `pipeloom agent: kernel package ${plain}: evaluating kernel "acme.plain"'s port types, rates and cost at the params' defaults and bounds did not finish within 2 s`,
    );
    expect(plainAgent.status).toBe(2);
  }, 120_000);
});

describe('a port type function that loops for one param value', () => {
  it('compile and predict exit 2 naming package, kernel, function, params and the limit', async () => {
    const p = pkg('loops-778', LOOPY('if (p.n === 778) for (;;) {}'));
    const doc = join(dir, 'loopy-778.json');
    writeFileSync(doc, JSON.stringify({ ...loopyDocument(778), options: { overlap: false, iterations: 1 } }));
    const [compiled, predicted] = await Promise.all([
      pipeloom('compile', doc, '--kernels', p, '--kernel-load-timeout', '5'),
      pipeloom('predict', doc, '--kernels', p, '--kernel-load-timeout', '5'),
    ]);
    for (const [r, command] of [
      [compiled, 'compile'],
      [predicted, 'predict'],
    ] as const) {
      expect(r.stderr).toContain(
        `pipeloom ${command}: kernel package ${p}: kernel "acme.loopy" outputs.out.type did not return within 5 s for params {"n":778} (it may loop for these values)`,
      );
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.status).toBe(2);
    }
  }, 120_000);

  it('an agent answers /healthz and logins while its package thread runs it, then refuses that deploy naming package, kernel, function, params and limit, and takes the next; a CPU twin making an initial token too', async () => {
    const mark = join(dir, 'looping');
    const release = join(dir, 'release');
    // n = 777 loops until the test releases it (so the test knows it is still looping); n = 778 loops for ever.
    const hostile = pkg(
      'agent-loops',
      LOOPY(
        `if (p.n === 777) { writeFileSync(${JSON.stringify(mark)}, ''); while (!existsSync(${JSON.stringify(release)})) {} } if (p.n === 778) for (;;) {}`,
        'if (p.n === 779) for (;;) {}',
      ),
    );
    // This process compiles against a copy that does not loop (a coordinator that did not check).
    expect((await loadKernelPackages([pkg('agent-benign', LOOPY(''))])).problems).toEqual([]);
    // Both agents started together: one that waits out the loop, one that gives up on it.
    const started = await Promise.allSettled([
      spawnLocalAgents(['h0'], { args: ['--kernels', hostile, '--kernel-load-timeout', '600'] }),
      spawnLocalAgents(['h0'], { args: ['--kernels', hostile, '--kernel-load-timeout', '5'] }),
    ]);
    const up = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    try {
      for (const s of started) if (s.status === 'rejected') throw s.reason;
      const [slow, strict] = up;
      {
        const url = slow.agents[0].url;
        const c = await connect([url], slow.token);
        const run = c.runBag(graphOf(loopyDocument(777)), { iterations: 1 }).done;
        let settled = false;
        void run.finally(() => (settled = true));
        await until(() => existsSync(mark));
        const health = await fetch(`${url.replace(/^ws/, 'http')}/healthz`);
        expect(health.status).toBe(200);
        const other = await connect([url], slow.token);
        other.close();
        expect(settled).toBe(false);
        writeFileSync(release, '');
        const r = await run;
        c.close();
        expect(r.failure?.message).toBeUndefined();
        expect(r.ok).toBe(true);
        await slow.stop();
      }
      const c = await connect([strict.agents[0].url], strict.token);
      const r = await c.runBag(graphOf(loopyDocument(778)), { iterations: 1 }).done;
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toContain(
        `bag-deploy on h0: kernel package ${hostile}: kernel "acme.loopy" outputs.out.type did not return within 5 s for params {"n":778} (it may loop for these values)`,
      );
      // The package thread starts again: the next deploy runs.
      const next = await c.runBag(graphOf(loopyDocument(8)), { iterations: 1 }).done;
      expect(next.failure?.message).toBeUndefined();
      expect(next.ok).toBe(true);
      // A delay's initial token made by the package's CPU twin, which loops for n = 779.
      const init = await c.run(compileOrThrow(initDocument(), false), { iterations: 2 }).done;
      c.close();
      expect(init.ok).toBe(false);
      expect(init.failure?.message).toContain(
        `kernel package ${hostile}: kernel "acme.loopy" cpu did not return within 5 s for params {"n":779} (it may loop for these values)`,
      );
    } finally {
      await Promise.all(up.map((a) => a.stop()));
    }
  }, 180_000);
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic, predict, sendLane, type ProjectDocument, type RunResult, type TraceEvent } from '@pipeloom/core';
import { agentsForSuite } from './testing/suite.js';
import { bagGraphOrThrow, compileOrThrow, connect, example, piic, pipeloomInProcess } from './testing/fixtures.js';

// Many CPU PEs per agent on real agent processes on loopback: each agent serves four
// (`--cpus 4`; on a 2-core machine they share its cores, which tests correctness, not speed),
// each PE its own worker thread. Static runs in both sync modes with transfers between the CPU
// PEs of one host through its shared memory, the task bag with every core as a worker, a scan
// over the cores, and a document's `cpu@h0` as the agent's first core.

const CORES = 4;
const agentsOf = agentsForSuite(['h0', 'h1'], { cpuOnly: ['h0', 'h1'], args: ['--cpus', String(CORES)] });
const urls = () => agentsOf().agents.map((a) => a.url);

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const fired = (events: readonly TraceEvent[], node: string) => events.filter((e) => e.kind === 'fire' && e.node === node).map((e) => e.iteration);

/**
 * Hosts with explicit CPU PEs (`ids` per host), a `memory` link between every two of one host and
 * an InfiniBand link between the first CPUs of every two hosts.
 */
function cpuArch(ids: Record<string, string[]>): ProjectDocument['arch'] {
  const pes = Object.entries(ids).flatMap(([host, list]) => list.map((id) => ({ id, host, kind: 'cpu' as const, memory: 1 << 30 })));
  const links: ProjectDocument['arch']['links'] = [];
  for (const list of Object.values(ids))
    for (let i = 0; i < list.length; i++)
      for (let j = i + 1; j < list.length; j++) links.push({ a: list[i], b: list[j], kind: 'memory', bandwidth: 1e10, latency: 1e-6, duplex: true });
  const firsts = Object.values(ids).map((l) => l[0]);
  for (let i = 0; i < firsts.length; i++)
    for (let j = i + 1; j < firsts.length; j++) links.push({ a: firsts[i], b: firsts[j], kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6, duplex: true });
  return { hosts: Object.keys(ids).map((id) => ({ id })), pes, links };
}

const cores = (host: string, n = CORES) => range(n).map((i) => `cpu${i}@${host}`);

/** P -> I1 -> I2 -> C (the paper's P-I-I-C, 64 x 64) mapped as given, on the CPU PEs given. */
function piicOn(ids: Record<string, string[]>, mapping: Record<string, string>, iterations = 12): ProjectDocument {
  const doc = piic({ size: 64, iterations });
  doc.arch = cpuArch(ids);
  doc.mapping = mapping;
  return doc;
}

/** Transfers the run traced, as `pe thread`. */
const transferLanes = (r: RunResult) => new Set(r.events.filter((e) => e.kind === 'transfer').map((e) => `${e.pe} ${e.thread}`));

describe('an agent with --cpus 4', () => {
  it('reports cpu0@h0 .. cpu3@h0, each with the cores given to the agent and the memory they share', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const h0 = c.agents.find((a) => a.host === 'h0')!;
      expect(h0.pes.map((p) => p.id)).toEqual(cores('h0'));
      for (const pe of h0.pes) expect(pe.capabilities).toMatchObject({ kind: 'cpu', cores: CORES, memory: h0.pes[0].memory });
    } finally {
      c.close();
    }
    // `pipeloom agents` lists each core.
    const listed = await pipeloomInProcess('agents', '--agents', urls().join(','), '--token', agentsOf().token);
    expect(listed.status, listed.stderr).toBe(0);
    for (const pe of [...cores('h0'), ...cores('h1')]) expect(listed.stdout).toMatch(new RegExp(`^  ${pe} +cpu, one of the agent's 4 cores, .* shared$`, 'm'));
  });

  it('refuses a --cpus it cannot serve, naming the flag and the bounds', async () => {
    for (const bad of ['0', '2.5', 'many', '257']) {
      const r = await pipeloomInProcess('agent', '--name', 'h9', '--token', 'x'.repeat(32), '--cpus', bad);
      expect(r.status, bad).toBe(1);
      expect(r.stderr).toContain(`--cpus must be a whole number of CPU PEs from 1 to 256, not "${bad}"`);
    }
  });
});

describe('static runs over the CPU PEs of one agent', () => {
  for (const sync of ['self-timed', 'barrier'] as const)
    for (const overlap of [true, false])
      it(`P -> I -> I -> C on cpu0..cpu3@h0 checks exact values every iteration, ${sync}, ${overlap ? 'with' : 'without'} overlap; each copy between two cores on its own lane`, async () => {
        const c = await connect(urls(), agentsOf().token);
        try {
          const doc = piicOn({ h0: cores('h0') }, { P: 'cpu0@h0', I1: 'cpu1@h0', I2: 'cpu2@h0', C: 'cpu3@h0' });
          const ig = compileOrThrow(doc, overlap);
          expect(c.check(ig).map(formatDiagnostic)).toEqual([]);
          const r = await c.run(ig, { iterations: 12, sync }).done;
          expect(r.failure).toBeUndefined();
          expect(r.ok).toBe(true);
          // The consumer checks every element against the increments (a wrong or torn copy fails the run).
          for (const n of ['P', 'I1', 'I2', 'C']) expect(fired(r.events, n)).toEqual(range(12));
          expect(new Set(r.events.filter((e) => e.kind === 'fire').map((e) => `${e.node} ${e.pe}`))).toEqual(
            new Set(['P cpu0@h0', 'I1 cpu1@h0', 'I2 cpu2@h0', 'C cpu3@h0']),
          );
          // Each copy on the sending core's lane towards the receiving one, once per iteration.
          const lanes = transferLanes(r);
          for (const [from, to] of [
            ['cpu0@h0', 'cpu1@h0'],
            ['cpu1@h0', 'cpu2@h0'],
            ['cpu2@h0', 'cpu3@h0'],
          ])
            expect(lanes.has(`${from} ${sendLane(to)}`), `${from} -> ${to} in ${[...lanes].join(', ')}`).toBe(true);
          expect(r.events.filter((e) => e.kind === 'transfer').length).toBe(3 * 12);
          expect(r.dropped).toBe(0);
          // Measured lanes are the predicted lanes (core's trace lanes), so the timeline draws the plan under each.
          const predicted = predict(doc);
          if (!predicted.ok) throw new Error('the four-core P-I-I-C must predict');
          const laneSet = (es: readonly TraceEvent[]) => new Set(es.filter((e) => e.kind !== 'barrier' && e.kind !== 'wait').map((e) => `${e.pe} ${e.thread}`));
          expect(laneSet(r.events)).toEqual(laneSet(predicted.prediction[overlap ? 'overlap' : 'noOverlap']!.timeline));
        } finally {
          c.close();
        }
      });

  for (const sync of ['self-timed', 'barrier'] as const)
    it(`two agents with two CPU PEs each (P cpu0@h0, I1 cpu1@h0, I2 cpu0@h1, C cpu1@h1), ${sync}: exact values, host-to-host between the first cores`, async () => {
      const c = await connect(urls(), agentsOf().token);
      try {
        const doc = piicOn({ h0: cores('h0', 2), h1: cores('h1', 2) }, { P: 'cpu0@h0', I1: 'cpu1@h0', I2: 'cpu0@h1', C: 'cpu1@h1' });
        const ig = compileOrThrow(doc, true);
        expect(c.check(ig).map(formatDiagnostic)).toEqual([]);
        const r = await c.run(ig, { iterations: 12, sync }).done;
        expect(r.failure).toBeUndefined();
        expect(r.ok).toBe(true);
        for (const n of ['P', 'I1', 'I2', 'C']) expect(fired(r.events, n)).toEqual(range(12));
        const lanes = transferLanes(r);
        for (const lane of ['cpu0@h0 send:cpu1@h0', 'cpu0@h1 send:cpu1@h1', 'cpu0@h0 send:cpu0@h1', 'cpu0@h1 recv:cpu0@h0'])
          expect(lanes.has(lane), `${lane} in ${[...lanes].join(', ')}`).toBe(true);
      } finally {
        c.close();
      }
    });
});

describe("a document's cpu@h0 is the agent's first core", () => {
  it('cpu@h0 with cpu1@h0 runs on cpu0@h0 and cpu1@h0; the trace keeps the ids the document wrote', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const doc = piicOn({ h0: ['cpu@h0', 'cpu1@h0'] }, { P: 'cpu@h0', I1: 'cpu1@h0', I2: 'cpu@h0', C: 'cpu1@h0' }, 6);
      const ig = compileOrThrow(doc, true);
      expect(c.check(ig).map(formatDiagnostic)).toEqual([]);
      const r = await c.run(ig, { iterations: 6 }).done;
      expect(r.failure).toBeUndefined();
      expect(fired(r.events, 'C')).toEqual(range(6));
      expect(new Set(r.events.map((e) => e.pe))).toEqual(new Set(['cpu@h0', 'cpu1@h0']));
    } finally {
      c.close();
    }
  });

  it('cpu@h0 and cpu0@h0 in one document are refused before deploy: one core, named both ways, with the fix', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const doc = piicOn({ h0: ['cpu@h0', 'cpu0@h0', 'cpu1@h0'] }, { P: 'cpu@h0', I1: 'cpu0@h0', I2: 'cpu1@h0', C: 'cpu1@h0' }, 4);
      const problems = c.check(compileOrThrow(doc, true)).map(formatDiagnostic);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/PEs cpu@h0 and cpu0@h0 are one PE of agent h0 \(cpu0@h0\)/);
      expect(problems[0]).toContain('cpu1@h0, cpu2@h0');
    } finally {
      c.close();
    }
  });

  it('requires cores>=4 holds on any of the cores; cores>=8 is refused naming the node, the PE and what it reports', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const doc = piicOn({ h0: cores('h0') }, { P: 'cpu0@h0', I1: 'cpu1@h0', I2: 'cpu2@h0', C: 'cpu3@h0' }, 4);
      doc.app.nodes.find((n) => n.id === 'I2')!.requires = ['cores>=4'];
      expect(c.check(compileOrThrow(doc, true)).map(formatDiagnostic)).toEqual([]);
      // A document of 8 cores on h0 (its compile counts them) meets an agent given 4.
      const eight = piicOn({ h0: cores('h0', 8) }, { P: 'cpu0@h0', I1: 'cpu1@h0', I2: 'cpu2@h0', C: 'cpu3@h0' }, 4);
      eight.app.nodes.find((n) => n.id === 'I2')!.requires = ['cores>=8'];
      // (and the cores it does not have: cpu4@h0 .. cpu7@h0, each named)
      expect(c.check(compileOrThrow(eight, true)).map(formatDiagnostic)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^mapping\.I2: node "I2" requires cores>=8, but cpu2@h0 on agent h0 fails it: cores is 4/)]),
      );
      // The document's own 4 cores: compile refuses it first, naming the host.
      doc.app.nodes.find((n) => n.id === 'I2')!.requires = ['cores>=8'];
      expect(() => compileOrThrow(doc, true)).toThrow(/node "I2" requires cores>=8, but is mapped to cpu2@h0, on host "h0" with 4 CPU PEs/);
    } finally {
      c.close();
    }
  });
});

/** examples/mlem.json at N = 8, its projection in K shares, as a task bag on the CPU PEs given. */
function mlemBag(ids: Record<string, string[]>, k: number, iterations: number): ProjectDocument {
  const doc = example('mlem');
  doc.params = { ...doc.params, N: 8, K: k };
  doc.arch = cpuArch(ids);
  const first = Object.values(ids)[0][0];
  doc.mapping = Object.fromEntries(doc.app.nodes.map((n) => [n.id, first]));
  doc.options = { ...doc.options, iterations, mode: 'taskbag' };
  return doc;
}

const errors = (r: RunResult) =>
  r.reports
    .filter((x) => x.node === 'error')
    .sort((a, b) => a.iteration - b.iteration)
    .map((x) => Number(x.values.error));

describe('the task bag and the scan on many CPU PEs', () => {
  it("a task bag takes every CPU PE of an agent as a worker of its own (MLEM, K = 8), and reaches one core's estimate", async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const graph = bagGraphOrThrow(mlemBag({ h0: cores('h0') }, 8, 3));
      const many = await c.runBag(graph, { iterations: 3, pes: cores('h0') }).done;
      expect(many.failure).toBeUndefined();
      expect(many.ok).toBe(true);
      // Every core ran tasks, each on its own thread: the PEs' fires overlap in time on a loaded machine or not, so count only.
      expect(Object.keys(many.bag!.perPe).sort()).toEqual(cores('h0'));
      for (const pe of cores('h0')) expect(many.events.some((e) => e.kind === 'fire' && e.pe === pe)).toBe(true);
      // The document's cpu@h0 names the first core in the pool too.
      const one = await c.runBag(graph, { iterations: 3, pes: ['cpu@h0'] }).done;
      expect(one.ok).toBe(true);
      expect(Object.keys(one.bag!.perPe)).toEqual(['cpu0@h0']);
      expect(errors(many)).toHaveLength(3);
      expect(errors(many)).toEqual(errors(one));
    } finally {
      c.close();
    }
  });

  it('a scan over cpu0..cpu3@h0 (scan.range, Kogge-Stone, 64 elements) checks every prefix, in both sync modes', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const doc = example('scan-mulmod');
      const [src, scan, check] = doc.app.nodes;
      src.params = { operator: 'scan.range', count: 64 };
      scan.params = { ...scan.params, operator: 'scan.range' };
      delete scan.params.k;
      check.params = { operator: 'scan.range', count: 64, output: scan.params.output, total: true };
      doc.arch = cpuArch({ h0: cores('h0') });
      doc.mapping = { src: 'cpu0@h0', scan1: cores('h0'), check: 'cpu1@h0' } as unknown as ProjectDocument['mapping'];
      for (const sync of ['self-timed', 'barrier'] as const) {
        const r = await c.run(compileOrThrow(doc, true), { iterations: 3, sync }).done;
        expect(r.failure, sync).toBeUndefined();
        expect(fired(r.events, 'check'), sync).toEqual(range(3));
        // The scan's nodes fired on every core.
        const workers = new Set(r.events.filter((e) => e.kind === 'fire' && e.node?.startsWith('scan1/')).map((e) => e.pe));
        expect([...workers].sort(), sync).toEqual(cores('h0'));
      }
    } finally {
      c.close();
    }
  });
});

describe('pipeloom run', () => {
  it('starts its local agents with as many CPU PEs as the document maps on a host', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pipeloom-cpus-'));
    const file = join(dir, 'piic-cores.json');
    writeFileSync(file, JSON.stringify(piicOn({ h0: cores('h0') }, { P: 'cpu0@h0', I1: 'cpu1@h0', I2: 'cpu2@h0', C: 'cpu3@h0' }, 4)));
    const r = await pipeloomInProcess('run', file, '--iterations', '4');
    expect(r.stderr).not.toMatch(/no PE|refused/);
    expect(r.status, r.stderr).toBe(0);
  });

  it('--cpus N gives its local agents more cores, which a task bag takes as workers; an N out of bounds is refused', async () => {
    // examples/mlem.json maps onto cpu@h0 and gpu0@h0; its 12 shares an iteration spread over every PE of the pool.
    const args = ['run', 'examples/mlem.json', '--mode', 'taskbag', '--param', 'N=8', '--param', 'K=12', '--iterations', '2', '--format', 'json'];
    const r = await pipeloomInProcess(...args, '--cpus', '3');
    expect(r.status, r.stderr).toBe(0);
    const perPe = Object.keys((JSON.parse(r.stdout) as { bag: { perPe: Record<string, number> } }).bag.perPe).sort();
    expect(perPe.filter((pe) => pe.startsWith('cpu'))).toEqual(cores('h0', 3));
    const bad = await pipeloomInProcess(...args, '--cpus', '0');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('--cpus must be a whole number of CPU PEs from 1 to 256, not "0"');
  });
});

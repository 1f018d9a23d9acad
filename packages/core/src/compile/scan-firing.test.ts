import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineKernelSpec, findKernel, registerKernels } from '@pipeloom/kernels/specs';
import type { WrittenDocument } from '../document/types.js';
import { NETWORKS } from '../scan/networks.js';
import { SCAN_EXECUTIONS, SCAN_OUTPUTS, SCAN_STRATEGIES } from '../scan/plan.js';
import { registerScanTestKernels, scanDocument } from '../testing/scan.js';
import { compile } from './compile.js';
import { allPrograms } from './decode.js';
import { simulate } from './simulate.js';
import type { ImplementationGraph } from './types.js';

// In the PACCO plan the scan is one firing holding all its PEs. Every expanded node
// of a scan starts in the same cycle, each level fires in its own phase of that cycle, no
// cluster-wide barrier closes a phase inside it, and the cycle-by-cycle checker accepts the
// result in both sync modes, with and without overlap.

registerScanTestKernels();
// A context for test.range (its `frames` port: 4 u32 words), so a scan can have an input that
// reaches some workers later than `in`.
if (!findKernel('test.frames4'))
  registerKernels(
    [
      defineKernelSpec({
        id: 'test.frames4',
        version: '1.0.0',
        description: 'Makes a 4-word context',
        params: {},
        outputs: [{ name: 'out', type: () => ({ kind: 'bytes', element: 'u32', shape: [4] }) }],
        cost: () => ({ flops: 1, bytes: 0 }),
      }),
    ],
    'compile/scan-firing.test',
  );

const example = (): WrittenDocument => JSON.parse(readFileSync(new URL('../../../../examples/scan-mulmod.json', import.meta.url), 'utf8'));

function compiled(doc: unknown, overlap: boolean): ImplementationGraph {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => d.message).join('\n'));
  return r.ig;
}

/** The start cycles of a scan's expanded nodes. */
const starts = (ig: ImplementationGraph, scan: string) => [...new Set(ig.order.filter((id) => id.startsWith(`${scan}/`)).map((id) => ig.latency[id]))];

describe('a scan is one firing', () => {
  // The example's worker 0 has its elements in cycle 0 (the source is on its PE), the others a
  // cycle or more later: without holding a scan's members to one start this fails.
  it('examples/scan-mulmod.json: every expanded node starts in the same cycle, each level in its fire phase, for every network and execution, with and without overlap', () => {
    for (const overlap of [false, true])
      for (const network of NETWORKS)
        for (const execution of SCAN_EXECUTIONS) {
          const what = `${network} ${execution} ${overlap ? 'overlap' : 'no overlap'}`;
          const doc = example();
          Object.assign(doc.app.nodes[1].params!, { network, execution });
          const ig = compiled(doc, overlap);
          expect(starts(ig, 'scan1'), what).toHaveLength(1);
          const levels = ig.scans!.scan1;
          const programs = Object.values(allPrograms(ig));
          levels.forEach((members, level) => {
            const phase = level === 0 ? (overlap ? 'overlap' : 'fire') : `fire#${level}`;
            for (const s of members) {
              const fires = programs.flatMap((p) =>
                p.phases.filter((ph) => ph.actions.some((a) => a.op === 'fire' && a.node === ig.order[s])).map((ph) => ph.name),
              );
              expect(fires, `${what}: ${ig.order[s]}`).toEqual([phase]);
            }
          });
          // From the first fire phase on, only the cycle's last phase has a cluster-wide barrier.
          const first = ig.phases.indexOf(overlap ? 'overlap' : 'fire');
          expect(ig.phaseBarriers, what).toEqual(ig.phases.map((_, f) => f < first || f === ig.phases.length - 1));
        }
  });

  it('fill cycles do not grow with the network depth (serial on 2 .. 16 workers, Kogge-Stone, rounds)', () => {
    const fills = new Set<number>();
    for (const network of ['serial', 'kogge-stone', 'brent-kung'])
      for (const execution of SCAN_EXECUTIONS)
        for (let p = 2; p <= 16; p += 2) fills.add(compiled(scanDocument(64, p, { network, execution }), false).fillCycles);
    expect([...fills]).toHaveLength(1);
  });

  it('a context input reaching a worker a cycle late: the whole scan starts then, and the checker passes in both sync modes', () => {
    const doc = scanDocument(32, 2, { context: true, network: 'sklansky' }, { hosts: 1, pes: ['cpu@h0', 'gpu0@h0'] });
    doc.arch.hosts[0].gpus = 1;
    doc.app.nodes.push({ id: 'ctx', kernel: 'test.frames4' });
    doc.app.edges.push({ from: { node: 'ctx', port: 'out' }, to: { node: 'scan1', port: 'frames' } });
    // The elements reach both workers in cycle 0; the context, made on the GPU, reaches the CPU
    // worker in cycle 1 (its read-back comes before the fire phase).
    doc.mapping.ctx = 'gpu0@h0';
    const ig = compiled(doc, false);
    expect(starts(ig, 'scan1')).toEqual([1]);
    for (const sync of ['barrier', 'self-timed'] as const) expect(simulate(ig, 4, { sync }).violations, sync).toEqual([]);
  });

  it('random scans on CPUs and GPUs of up to 3 hosts: one start cycle, and every read sees its iteration in both sync modes (checker)', () => {
    const PES = ['cpu@h0', 'gpu0@h0', 'cpu@h1', 'gpu0@h1', 'cpu@h2'];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.constantFrom(...PES), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(...NETWORKS),
        fc.constantFrom(...SCAN_STRATEGIES),
        fc.constantFrom(...SCAN_OUTPUTS),
        fc.constantFrom(...SCAN_EXECUTIONS),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 1000 }),
        (N, list, network, strategy, output, execution, overlap, context, seed) => {
          const workers = list.slice(0, N);
          const doc = scanDocument(
            N,
            workers.length,
            { network, strategy, output, execution, ...(context ? { context: true } : {}) },
            { hosts: 3, pes: workers },
          );
          doc.arch.hosts = doc.arch.hosts.map((h, i) => ({ ...h, gpus: i < 2 ? 1 : 0 }));
          if (context) {
            doc.app.nodes.push({ id: 'ctx', kernel: 'test.frames4' });
            doc.app.edges.push({ from: { node: 'ctx', port: 'out' }, to: { node: 'scan1', port: 'frames' } });
            doc.mapping.ctx = 'gpu0@h1';
          }
          const ig = compiled(doc, overlap);
          expect(starts(ig, 'scan1')).toHaveLength(1);
          for (const sync of ['barrier', 'self-timed'] as const) {
            const r = simulate(ig, 3, { sync, seed });
            expect(r.violations, sync).toEqual([]);
            for (const id of ig.order) expect(r.fires[id], id).toBe(3);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('random scans on the cores of a many-core host (cpus: 3, a GPU) and another host: copies between cores over memory links, one start cycle, the checker passes', () => {
    const PES = ['cpu0@h0', 'cpu1@h0', 'cpu2@h0', 'gpu0@h0', 'cpu@h1'];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.constantFrom(...PES), { minLength: 1, maxLength: 6 }),
        fc.constantFrom(...NETWORKS),
        fc.constantFrom(...SCAN_EXECUTIONS),
        fc.boolean(),
        fc.integer({ min: 0, max: 1000 }),
        (N, list, network, execution, overlap, seed) => {
          const workers = list.slice(0, N);
          const doc = scanDocument(N, workers.length, { network, execution }, { hosts: 2, pes: workers });
          doc.arch.hosts[0] = { id: 'h0', cpus: 3, gpus: 1 };
          Object.assign(doc.mapping, { src: 'cpu1@h0', tot: 'cpu2@h0' });
          const ig = compiled(doc, overlap);
          expect(starts(ig, 'scan1')).toHaveLength(1);
          // Two cores of h0 exchange data only over their memory link.
          const { pes } = ig.programs;
          const { from, link } = ig.programs.transfer;
          for (let k = 0; k < from.length; k++) {
            if (from[k] < 0) continue;
            const [a, b] = [pes[ig.buffers.pe[from[k]]], pes[ig.buffers.pe[k]]];
            if (a.kind === 'cpu' && b.kind === 'cpu' && a.host === b.host) expect(ig.programs.links[link[k]].kind).toBe('memory');
          }
          for (const sync of ['barrier', 'self-timed'] as const) {
            const r = simulate(ig, 3, { sync, seed });
            expect(r.violations, sync).toEqual([]);
            for (const id of ig.order) expect(r.fires[id], id).toBe(3);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

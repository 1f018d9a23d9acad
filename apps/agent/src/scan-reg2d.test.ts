import { describe, expect, it } from 'vitest';
import { NETWORKS, type ProjectDocument, type ScanExecution } from '@pipeloom/core';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect } from './testing/fixtures.js';

// Image registration as a scan (reg2d) on real agent processes on loopback: 2 agents x
// 2 PEs (the CPU and the llvmpipe GPU of each) as 4 workers. A seeded series of N + 1 frames
// (reg2d.frames, replicated to every worker as the operator's context), its N neighbour
// registrations (reg2d.pair), then every network, eager and rounds, scanning them with
// reg2d.compose: half the expanded nodes run the twin, half the WGSL. reg2d.check checks each
// scan against the series' known drift (every prefix within 0.5 px of the truth) and against a
// serial scan of the same elements on one CPU (within the operator's 0.25 px tolerance: the
// bracketings differ, the answer must not), in both sync modes (a scan is one firing: core's
// compile/scan-firing.test.ts). One document holds all the scans: a deploy costs
// seconds on llvmpipe whatever its size.

const agentsOf = agentsForSuite(['h0', 'h1']);

const N = 64;
const WORKERS = ['cpu@h0', 'gpu0@h0', 'cpu@h1', 'gpu0@h1'];
const series = { width: 64, height: 64, seed: 3, drift: 0.4, rotation: 0.003 };
const operator = { width: 64, height: 64, frames: N + 1, eps: 1e-6, iterations: 50 };
const EXECUTIONS: ScanExecution[] = ['eager', 'rounds'];

function reg2dDoc(sync: 'self-timed' | 'barrier'): ProjectDocument {
  const nodes: ProjectDocument['app']['nodes'] = [
    { id: 'frames', kernel: 'reg2d.frames', params: { ...series, noise: 0.1, low_contrast: 0, frames: N + 1 } },
    { id: 'pairs', kernel: 'reg2d.pair', params: { ...operator, first: 0, count: N } },
    { id: 'serial', type: 'scan', params: { operator: 'reg2d.compose', network: 'serial', ...operator } },
  ];
  const edge = (from: string, fromPort: string, to: string, toPort: string) => ({ from: { node: from, port: fromPort }, to: { node: to, port: toPort } });
  const edges: ProjectDocument['app']['edges'] = [
    edge('frames', 'frames', 'pairs', 'frames'),
    edge('frames', 'frames', 'serial', 'frames'),
    edge('pairs', 'out', 'serial', 'in'),
  ];
  const mapping: Record<string, string | string[]> = { frames: 'cpu@h0', pairs: 'cpu@h0', serial: ['cpu@h0'] };
  let i = 0;
  for (const network of NETWORKS)
    for (const execution of EXECUTIONS) {
      const id = `${network}.${execution}`;
      const check = `check.${id}`;
      nodes.push(
        { id, type: 'scan', params: { operator: 'reg2d.compose', network, execution, ...operator } },
        { id: check, kernel: 'reg2d.check', params: { ...series, count: N, output: 'inclusive', total: true, serial: true } },
      );
      edges.push(
        edge('frames', 'frames', id, 'frames'),
        edge('pairs', 'out', id, 'in'),
        edge(id, 'out', check, 'out'),
        edge(id, 'total', check, 'total'),
        edge('serial', 'out', check, 'serial'),
      );
      mapping[id] = WORKERS;
      mapping[check] = i++ % 2 ? 'gpu0@h1' : 'cpu@h1';
    }
  return {
    format: 'pipeloom/v2',
    name: 'reg2d scans on four workers',
    app: { nodes, edges },
    arch: {
      hosts: [
        { id: 'h0', gpus: 1 },
        { id: 'h1', gpus: 1 },
      ],
      network: { kind: 'ethernet', bandwidth: 1e9, latency: 1e-5 },
    },
    mapping,
    options: { overlap: false, iterations: 2, sync },
  } as unknown as ProjectDocument;
}

describe(`reg2d scans of ${N} registrations on ${WORKERS.join(', ')} (two agents), every network, eager and rounds`, () => {
  for (const sync of ['self-timed', 'barrier'] as const)
    it(`${sync}: every prefix within 0.5 px of the known drift and 0.25 px of the serial scan; one fire per expanded node per iteration; both devices ran the operator`, async () => {
      const ig = compileOrThrow(reg2dDoc(sync), false);
      const c = await connect(
        agentsOf().agents.map((a) => a.url),
        agentsOf().token,
      );
      try {
        expect(c.check(ig)).toEqual([]);
        const r = await c.run(ig, { iterations: 2 }).done;
        expect(r.failure).toBeUndefined();
        expect(r.ok).toBe(true);
        const fired = new Map<string, number>();
        for (const e of r.events) if (e.kind === 'fire' && e.node) fired.set(e.node, (fired.get(e.node) ?? 0) + 1);
        for (const node of ig.order) expect(fired.get(node), node).toBe(2);
        // Both devices ran the operator: the WGSL on the llvmpipe workers, the twin on the CPUs.
        const pes = new Set(r.events.filter((e) => e.kind === 'fire' && e.node?.startsWith('kogge-stone.eager/')).map((e) => e.pe));
        expect([...pes].sort()).toEqual([...WORKERS].sort());
      } finally {
        c.close();
      }
    }, 300_000);
});

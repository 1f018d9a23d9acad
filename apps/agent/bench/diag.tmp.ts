import { analyze, bagGraph, Coordinator, type ProjectDocument } from '@pipeloom/core';
import { spawnLocalAgents } from '../src/local/spawn.js';
import { nodeClock } from '../src/cli/agents.js';
import WebSocket from 'ws';
const N = Number(process.argv[2] ?? 16), A = Number(process.argv[3] ?? 36), K = Number(process.argv[4] ?? 36);
const doc = {
  format: 'pipeloom/v2', name: 'x',
  app: { nodes: [
    { id: 'phantom', kernel: 'mlem.phantom', params: { size: N, angles: A, spheres: 6, seed: 1 } },
    { id: 'projbp', kernel: 'mlem.projbp', params: { size: N, angles: A }, tasks: K },
    { id: 'update', kernel: 'mlem.update', params: { size: N } } ],
  edges: [
    { from: { node: 'phantom', port: 'sinogram' }, to: { node: 'projbp', port: 'sinogram' } },
    { from: { node: 'update', port: 'estimate' }, to: { node: 'projbp', port: 'estimate' }, delay: 2, init: 1 },
    { from: { node: 'projbp', port: 'backprojection' }, to: { node: 'update', port: 'backprojection' } },
    { from: { node: 'phantom', port: 'sensitivity' }, to: { node: 'update', port: 'sensitivity' } },
    { from: { node: 'update', port: 'estimate' }, to: { node: 'update', port: 'previous' }, delay: 2, init: 1 } ] },
  arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 0 }, { id: 'h1', cpus: 1, gpus: 0 }] },
  mapping: { phantom: 'cpu@h0', projbp: ['cpu@h0', 'cpu@h1'], update: 'cpu@h0' },
  options: { overlap: false, iterations: 6, mode: 'taskbag' },
} as unknown as ProjectDocument;
const local = await spawnLocalAgents(['h0', 'h1'], { cpuOnly: ['h0', 'h1'] });
const c = await Coordinator.connect(local.agents.map((a) => a.url), { token: local.token, connect: (u) => new WebSocket(u) as never, clock: nodeClock });
const an = analyze(doc); if (!an.model) { console.log(an.diagnostics); process.exit(1); } const g = bagGraph(an.model).graph!;
for (let rep = 0; rep < 2; rep++) {
  const r = await c.runBag(g, { iterations: 6, prefetch: 2 }).done;
  const fires = r.events.filter((e) => e.kind === 'fire' && e.iteration >= 1);
  const byPe = new Map<string, typeof fires>();
  for (const e of fires) (byPe.get(e.pe) ?? byPe.set(e.pe, []).get(e.pe)!).push(e);
  console.log('seconds', r.seconds.toFixed(3), 'tasks', r.bag?.committed);
  for (const [pe, es] of byPe) {
    es.sort((a, b) => a.start - b.start);
    const busy = es.reduce((s, e) => s + e.end - e.start, 0) / 1000;
    const span = (es.at(-1)!.end - es[0].start) / 1000;
    const gaps = es.slice(1).map((e, i) => e.start - es[i].end).sort((a, b) => a - b);
    console.log(pe, 'fires', es.length, 'busy ms', busy.toFixed(1), 'span ms', span.toFixed(1), 'gap median us', gaps[gaps.length >> 1]?.toFixed(0), 'gap p90', gaps[Math.floor(gaps.length * 0.9)]?.toFixed(0));
    console.log('  ', es.slice(0, 8).map((e) => `${e.name}:${((e.end - e.start) / 1000).toFixed(2)}`).join(' '));
  }
  const pulls = r.events.filter((e) => e.kind === 'transfer');
  console.log('pulls', pulls.length, 'mean ms', (pulls.reduce((s, e) => s + e.end - e.start, 0) / pulls.length / 1000).toFixed(2));
}
const { compile } = await import('@pipeloom/core');
const d2 = structuredClone(doc) as any; d2.options.mode = 'static'; d2.arch.network = { kind: 'ethernet', bandwidth: 1.25e9, latency: 5e-5 };
const cr = compile(d2); if (!cr.ok) { console.log(cr.diagnostics); } else {
  const r = await c.run(cr.ig, { iterations: 6 }).done;
  console.log('static seconds', r.seconds.toFixed(3));
  for (const e of r.events.filter((e) => e.kind === 'fire' && (e.node === 'phantom' || e.node === 'update' || e.node === 'projbp'))) console.log(e.node, e.pe, e.iteration, ((e.end - e.start) / 1000).toFixed(2));
}
c.close(); await local.stop();

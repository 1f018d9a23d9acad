// npm run bench:memory: the memory pass (buffer sharing per PE, compile/memory.ts) on each case,
// against the old pass (DSatur, view units coloured apart and live the whole cycle: kept in
// memory-dsatur.ts for this baseline) measured in the same run on the same passes' output.
// Per case: PEs, buffers, colours, allocated bytes (sum over PEs), the clique lower bound, the
// ratio of the two (summed, and the worst PE), the level bound (color.ts: a bound no colouring
// can beat, often above the clique where sizes differ), and the pass's median time.
import { analyze } from '../src/document/validate.js';
import type { Model, ModelNode } from '../src/document/model.js';
import { insertBuffers } from '../src/compile/buffers.js';
import { ArcColoring } from '../src/compile/color.js';
import { assignDepth } from '../src/compile/depth.js';
import { computeLatency, type LatencyResult } from '../src/compile/latency.js';
import { colorMemory, memoryItems } from '../src/compile/memory.js';
import { planPhases, type PhasePlan } from '../src/compile/phases.js';
import { Router } from '../src/compile/route.js';
import { schedule } from '../src/compile/schedule.js';
import type { BufferTable } from '../src/compile/table.js';
import type { Buffers, MemoryReport } from '../src/compile/types.js';
import { layoutJoins } from '../src/compile/views.js';
import { layeredDocument, randomDocument, sdfDocument } from '../src/testing/index.js';
import { registerExampleKernels } from '../../../examples/kernels/register.js';
import { colorMemoryDsatur } from './memory-dsatur.js';
import { slicedPipeline } from '../src/testing/sliced.js';

registerExampleKernels();

interface Passes {
  model: Model;
  order: ModelNode[];
  buffers: Buffers;
  table: BufferTable;
  plan: PhasePlan;
  lat: LatencyResult;
  overlap: boolean;
}

/** compile()'s passes up to the memory pass (compile.ts compileModel). */
function passes(doc: unknown, overlapOption?: boolean): Passes {
  const { model, diagnostics } = analyze(doc);
  if (!model) throw new Error(diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  const overlap = overlapOption ?? model.doc.options.overlap;
  const { nodes: order } = schedule(model);
  const { buffers, links, table } = insertBuffers(model, order, new Router(model));
  assignDepth(buffers, overlap);
  const plan = planPhases(model, order, buffers, table, overlap, links);
  const lat = computeLatency(model, order, buffers, table, plan, overlap);
  layoutJoins(model, order, buffers, table, lat);
  return { model, order, buffers, table, plan, lat, overlap };
}

type Pass = (p: Passes) => Record<string, MemoryReport>;
const OLD: Pass = (p) => colorMemoryDsatur(p.model, p.order, p.buffers, p.table, p.plan, p.lat, p.overlap);
const NEW: Pass = (p) => colorMemory(p.model, p.order, p.buffers, p.table, p.plan, p.lat, p.overlap);

/** The level bound of every PE (color.ts), summed: whole-cycle items plus each PE's arcs' bound. */
function levelBound(p: Passes): number {
  const items = memoryItems(p.model, p.order, p.buffers, p.table, p.plan, p.lat, p.overlap);
  const c = new ArcColoring();
  let sum = 0;
  for (let q = 0; q < p.model.pes.length; q++) {
    let n = 0;
    c.reserve(items.start[q + 1] - items.start[q]);
    for (let k = items.start[q]; k < items.start[q + 1]; k++) {
      if (items.from[k] < 0) {
        sum += items.weight[k];
        continue;
      }
      c.from[n] = items.from[k];
      c.to[n] = items.to[k];
      c.wrap[n] = items.wrap[k];
      c.weight[n++] = items.weight[k];
    }
    c.colour(n, items.length[q]);
    sum += Math.max(c.clique, c.levels);
  }
  return sum;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

interface Result {
  colours: number;
  after: number;
  bound: number;
  worst: number;
  ms: number;
}

/** Both passes on each document of a case (summed over documents and PEs), timed in alternation. */
function run(docs: Passes[], runs: number): { old: Result; now: Result; pes: number; buffers: number; levels: number } {
  const result = (pass: Pass): Result => {
    let colours = 0;
    let after = 0;
    let bound = 0;
    let worst = 1;
    for (const p of docs) {
      for (const m of Object.values(pass(p))) {
        colours += m.colorBytes.length;
        after += m.after;
        bound += m.lowerBound;
        if (m.lowerBound > 0) worst = Math.max(worst, m.after / m.lowerBound);
      }
    }
    return { colours, after, bound, worst, ms: 0 };
  };
  const old = result(OLD);
  const now = result(NEW);
  const times = { old: [] as number[], now: [] as number[] };
  for (let i = 0; i < runs; i++) {
    for (const [key, pass] of [
      ['old', OLD],
      ['now', NEW],
    ] as const) {
      const t0 = performance.now();
      for (const p of docs) pass(p);
      times[key].push(performance.now() - t0);
    }
  }
  old.ms = median(times.old);
  now.ms = median(times.now);
  let levels = 0;
  for (const p of docs) levels += levelBound(p);
  // The new pass last, so the buffers' colours are its own.
  for (const p of docs) NEW(p);
  return { old, now, levels, pes: docs.reduce((s, p) => s + p.model.pes.length, 0), buffers: docs.reduce((s, p) => s + p.buffers.count, 0) };
}

const seeds = (n: number) => Array.from({ length: n }, (_, s) => s);
const cases: [string, () => Passes[], number][] = [
  ...[8, 12, 16, 24].map((s): [string, () => Passes[], number] => [
    `sliced pipeline, 50 nodes (${s} slices x ${48 / s} stages), 1 core, no overlap`,
    () => [passes(slicedPipeline(s))],
    200,
  ]),
  [
    'SDF graphs, 50 nodes, 1 core, no overlap (20 seeds)',
    () => seeds(20).map((s) => passes(sdfDocument(s, { nodes: 50, hosts: 1, maxGpus: 0, overlap: false }).doc)),
    20,
  ],
  [
    'SDF graphs, 30 nodes, 3 hosts x (1 CPU + 0-2 GPUs) (20 seeds, both strategies)',
    () => seeds(20).map((s) => passes(sdfDocument(s, { nodes: 30, hosts: 3, maxGpus: 2, overlap: s % 2 === 0 }).doc)),
    20,
  ],
  [
    'random split/join graphs, 40 nodes, 2 hosts (20 seeds, both strategies)',
    () => seeds(20).map((s) => passes(randomDocument(s, { nodes: 40, hosts: 2, maxGpus: 2, overlap: s % 2 === 0, splitJoin: true }))),
    20,
  ],
  ['layered 10,000 nodes, 1,024 PEs, overlap', () => [passes(layeredDocument(42, { nodes: 10000, hosts: 128, gpus: 7 }), true)], 9],
  ['layered 10,000 nodes, 1,024 PEs, no overlap', () => [passes(layeredDocument(42, { nodes: 10000, hosts: 128, gpus: 7 }), false)], 9],
  ['layered 10,000 nodes, 64 PEs, no overlap', () => [passes(layeredDocument(42, { nodes: 10000, hosts: 8, gpus: 7 }), false)], 9],
  ['layered 10,000 nodes, 1 CPU, no overlap', () => [passes(layeredDocument(42, { nodes: 10000, hosts: 1, gpus: 0 }), false)], 5],
];

// Warm the JIT on both passes.
const warm = [
  passes(layeredDocument(7, { nodes: 1000, hosts: 16, gpus: 7 }), false),
  ...seeds(5).map((s) => passes(sdfDocument(s, { nodes: 30, hosts: 2, maxGpus: 2, overlap: false }).doc)),
];
for (let i = 0; i < 5; i++) for (const p of warm) (OLD(p), NEW(p));

const rows: string[][] = [
  [
    'case',
    'PEs',
    'buffers',
    'colours old / new',
    'allocated old',
    'allocated new',
    'clique bound old / new',
    'ratio old',
    'ratio new',
    'worst PE old / new',
    'level bound',
    'new / level',
    'ms old',
    'ms new',
  ],
];
const bytes = (x: number) => (x >= 1e6 ? `${(x / 2 ** 20).toFixed(1)} MiB` : x.toLocaleString('en'));
for (const [name, make, runs] of cases) {
  const r = run(make(), runs);
  rows.push([
    name,
    r.pes.toLocaleString('en'),
    r.buffers.toLocaleString('en'),
    `${r.old.colours.toLocaleString('en')} / ${r.now.colours.toLocaleString('en')}`,
    bytes(r.old.after),
    bytes(r.now.after),
    `${bytes(r.old.bound)} / ${bytes(r.now.bound)}`,
    (r.old.after / r.old.bound).toFixed(3),
    (r.now.after / r.now.bound).toFixed(3),
    `${r.old.worst.toFixed(3)} / ${r.now.worst.toFixed(3)}`,
    bytes(r.levels),
    (r.now.after / r.levels).toFixed(3),
    r.old.ms.toFixed(2),
    r.now.ms.toFixed(2),
  ]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
console.log(`memory pass, old (DSatur, views apart) against new (color.ts), node ${process.version}; ms: median of the pass alone over the case's documents`);
for (const [i, r] of rows.entries()) {
  console.log(`| ${r.map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join(' | ')} |`);
  if (i === 0) console.log(`|${widths.map((w, j) => (j === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
}

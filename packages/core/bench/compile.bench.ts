// npm run bench:compile: compile() (validate + every pass + programs) of a seeded layered DFG
// on a 1,024-PE cluster (128 hosts x (1 CPU + 7 GPUs), InfiniBand between the CPUs), at
// 1,000 nodes (the baseline) and 10,000 nodes, both strategies. Median of several runs, in
// wall time and in this process's CPU time (the latter is steadier on a shared machine).
// Then run setup: the coordinator's deploy messages for every host (the self-timed plan
// included) of the same DFGs on 64 hosts, against compile() of the same graph in this run.
import { Session } from 'node:inspector/promises';
import { compile } from '../src/compile/compile.js';
import { allPrograms, lastStartCycle, programHosts } from '../src/compile/decode.js';
import type { AccessList, ImplementationGraph } from '../src/compile/types.js';
import { selfTimedPlan } from '../src/compile/contract.js';
import { deployMessages, deployTexts } from '../src/run/coordinator.js';
import { layeredDocument } from '../src/testing/index.js';

const RUNS = 9;
const HOSTS = 128;
const GPUS = 7;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function measure(nodes: number, overlap: boolean) {
  const doc = layeredDocument(42, { nodes, hosts: HOSTS, gpus: GPUS });
  const first = compile(doc, { overlap });
  if (!first.ok) throw new Error(first.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  const times: number[] = [];
  const cpu: number[] = [];
  const faults: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const f0 = process.resourceUsage().minorPageFault;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    compile(doc, { overlap });
    const c = process.cpuUsage(c0);
    times.push(performance.now() - t0);
    cpu.push((c.user + c.system) / 1000);
    faults.push(process.resourceUsage().minorPageFault - f0);
  }
  return {
    nodes,
    edges: doc.app.edges.length,
    buffers: first.ig.buffers.count,
    pes: first.ig.programs.pes.length,
    ms: median(times),
    min: Math.min(...times),
    cpu: median(cpu),
    faults: median(faults),
  };
}

// Warm the JIT on both strategies before measuring anything.
const warm = layeredDocument(7, { nodes: 1000, hosts: HOSTS, gpus: GPUS });
for (let i = 0; i < 5; i++) for (const overlap of [true, false]) compile(warm, { overlap });

// `min ms`: the fastest run, the one least interrupted by the collector (steadier across noisy machines).
const big10k: { overlap: boolean; ms: number; faults: number }[] = [];
const rows: string[][] = [['strategy', 'nodes', 'edges', 'PEs', 'buffers', 'wall ms', 'min ms', 'CPU ms', 'CPU x 1,000-node run']];
for (const overlap of [true, false]) {
  const base = measure(1000, overlap);
  const big = measure(10000, overlap);
  big10k.push({ overlap, ms: big.ms, faults: big.faults });
  for (const r of [base, big]) {
    rows.push([
      overlap ? 'overlap' : 'no overlap',
      r.nodes.toLocaleString('en'),
      r.edges.toLocaleString('en'),
      String(r.pes),
      r.buffers.toLocaleString('en'),
      r.ms.toFixed(1),
      r.min.toFixed(1),
      r.cpu.toFixed(1),
      (r.cpu / base.cpu).toFixed(2),
    ]);
  }
}
function printTable(rows: string[][]) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const [i, r] of rows.entries()) {
    console.log(`| ${r.map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j]))).join(' | ')} |`);
    if (i === 0) console.log(`|${widths.map((w, j) => (j === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  }
}
console.log(`compile() on ${HOSTS} hosts x (1 CPU + ${GPUS} GPUs), median of ${RUNS} runs, node ${process.version}`);
printTable(rows);

// What the output alone costs: a copy of the 10,000-node IG (the buffers' and programs'
// columns, the memory reports), made the way compile() makes them, with nothing computed. The passes
// cannot go below it while the IG has this shape.
function copyOutput(ig: ImplementationGraph) {
  const b = ig.buffers;
  const buffers = {
    ...b,
    id: b.id.slice(),
    pe: b.pe.slice(),
    source: b.source.slice(),
    port: b.port.slice(),
    parent: b.parent.slice(),
    parentOffset: b.parentOffset.slice(),
    type: b.type.slice(),
    bytes: b.bytes.slice(),
    depth: b.depth.slice(),
    color: b.color.slice(),
    next: { start: b.next.start.slice(), list: b.next.list.slice() },
    consumers: { start: b.consumers.start.slice(), node: b.consumers.node.slice(), port: b.consumers.port.slice() },
  };
  const memory: Record<string, unknown> = {};
  for (const [pe, m] of Object.entries(ig.memory)) memory[pe] = { ...m, colorBytes: m.colorBytes.slice() };
  // The programs are typed columns (see Programs in compile/types.ts): copies of those.
  const p = ig.programs;
  const list = (l: AccessList) => ({
    start: l.start.slice(),
    port: l.port.slice(),
    buffer: l.buffer.slice(),
    lag: l.lag.slice(),
    offset: l.offset.slice(),
    bytes: l.bytes.slice(),
    origin: l.origin.slice(),
    delay: l.delay.slice(),
  });
  const programs = {
    pes: p.pes.map((x) => ({ ...x, slots: x.slots.slice() })),
    start: p.start.slice(),
    list: p.list.slice(),
    transfer: { from: p.transfer.from.slice(), lag: p.transfer.lag.slice(), startCycle: p.transfer.startCycle.slice(), link: p.transfer.link.slice() },
    links: p.links.map((l) => ({ ...l })),
    fire: {
      kernel: p.fire.kernel.slice(),
      params: p.fire.params.slice(),
      startCycle: p.fire.startCycle.slice(),
      inputs: list(p.fire.inputs),
      outputs: list(p.fire.outputs),
    },
  };
  return { buffers, memory, programs };
}
for (const overlap of [true, false]) {
  const r = compile(layeredDocument(42, { nodes: 10000, hosts: HOSTS, gpus: GPUS }), { overlap });
  if (!r.ok) continue;
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    copyOutput(r.ig);
    times.push(performance.now() - t0);
  }
  console.log(
    `${overlap ? 'overlap' : 'no overlap'}: copying the 10,000-node output alone takes ${median(times).toFixed(1)} ms (the floor for compile() with this output shape)`,
  );
}

// Run setup: what the coordinator builds before a run starts (run/coordinator.ts
// `deployMessages`: each host's programs, the self-timed plan and its part of it), on 64 hosts
// x (1 CPU + 7 GPUs). `plan` is `selfTimedPlan` alone; `texts` is serialising every host's
// message as the coordinator sends it (`deployTexts`: the parts all hosts share once), `each
// whole` the same with JSON.stringify per message (each carries every PE, buffer and counter:
// the protocol's shape, so its bytes grow with hosts x graph). Ratios: deploys to compile() of
// the same graph in this run, and to the 1,000-node deploys.
const SETUP_HOSTS = 64;
const SETUP_RUNS = 5;
function setup(nodes: number, overlap: boolean) {
  const doc = layeredDocument(42, { nodes, hosts: SETUP_HOSTS, gpus: GPUS });
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  const ig = r.ig;
  const hosts = programHosts(ig).map((id) => ({ id, url: `ws://${id}:7070` }));
  const settings = (sync: 'self-timed' | 'barrier') => ({
    runId: 'bench',
    secret: '0'.repeat(32),
    hosts,
    iterations: 100,
    cycles: lastStartCycle(ig) + 100,
    sync,
  });
  const programs = Object.values(allPrograms(ig));
  const pes = Object.fromEntries(ig.programs.pes.map((p) => [p.pe, { host: p.host as string, kind: p.kind }]));
  const t = { compile: [] as number[], selfTimed: [] as number[], plan: [] as number[], barrier: [] as number[], texts: [] as number[], json: [] as number[] };
  let bytes = 0;
  let counters = 0;
  const time = (xs: number[], f: () => void) => {
    const t0 = performance.now();
    f();
    xs.push(performance.now() - t0);
  };
  for (let i = 0; i < SETUP_RUNS; i++) {
    time(t.compile, () => compile(doc, { overlap }));
    let messages!: ReturnType<typeof deployMessages>;
    time(t.selfTimed, () => (messages = deployMessages(ig, settings('self-timed'))));
    time(t.plan, () => (counters = selfTimedPlan(programs, pes).counters.length));
    time(t.barrier, () => deployMessages(ig, settings('barrier')));
    time(t.texts, () => {
      bytes = 0;
      for (const text of deployTexts(messages).values()) bytes += text.length;
    });
    time(t.json, () => {
      for (const m of messages.values()) JSON.stringify(m);
    });
  }
  return {
    nodes,
    pes: ig.programs.pes.length,
    counters,
    bytes,
    compile: median(t.compile),
    selfTimed: median(t.selfTimed),
    plan: median(t.plan),
    barrier: median(t.barrier),
    texts: median(t.texts),
    json: median(t.json),
  };
}
const setupRows: string[][] = [
  [
    'strategy',
    'nodes',
    'PEs',
    'counters',
    'compile ms',
    'deploys ms (self-timed)',
    'of it plan ms',
    'deploys ms (barrier)',
    'texts ms',
    'each whole ms',
    'MB sent',
    'deploys / compile',
    'x 1,000-node deploys',
  ],
];
// Warm the JIT on the setup path as on compile().
for (const overlap of [true, false]) setup(1000, overlap);
for (const overlap of [true, false]) {
  const base = setup(1000, overlap);
  for (const r of [base, setup(10000, overlap)]) {
    setupRows.push([
      overlap ? 'overlap' : 'no overlap',
      r.nodes.toLocaleString('en'),
      String(r.pes),
      r.counters.toLocaleString('en'),
      r.compile.toFixed(1),
      r.selfTimed.toFixed(1),
      r.plan.toFixed(1),
      r.barrier.toFixed(1),
      r.texts.toFixed(0),
      r.json.toFixed(0),
      (r.bytes / 1e6).toFixed(1),
      (r.selfTimed / r.compile).toFixed(2),
      (r.selfTimed / base.selfTimed).toFixed(2),
    ]);
  }
}
console.log(`\nrun setup (coordinator deployMessages) on ${SETUP_HOSTS} hosts x (1 CPU + ${GPUS} GPUs), median of ${SETUP_RUNS} runs`);
printTable(setupRows);
console.log('');

// Pages the process takes afresh from the OS per compile (minor page faults): V8 gives freed
// heap pages back and takes new ones, and each first touch of a page is a fault. What one
// costs depends on the machine (on a VM whose host reclaims freed memory it can be ~10 µs,
// against well under 1 µs on bare metal), so the bench measures it here, on a fresh buffer, and
// prints the share of compile() that is the machine's first touches rather than the compiler.
function firstTouchMicros(): number {
  const f0 = process.resourceUsage().minorPageFault;
  const t0 = performance.now();
  const b = new Uint8Array(64 << 20);
  for (let i = 0; i < b.length; i += 4096) b[i] = 1;
  const us = (performance.now() - t0) * 1000;
  return us / Math.max(1, process.resourceUsage().minorPageFault - f0);
}
// The 10,000-node runs of the table above counted their faults.
const touch = median(Array.from({ length: 5 }, firstTouchMicros));
for (const { overlap, ms, faults: f } of big10k) {
  console.log(
    `${overlap ? 'overlap' : 'no overlap'}: a 10,000-node compile first-touches ${f.toLocaleString('en')} pages (median); at ${touch.toFixed(2)} µs per page on this machine that is ~${((f * touch) / 1000).toFixed(0)} ms of its ${ms.toFixed(0)} ms`,
  );
}

// Bytes allocated per 10,000-node compile, collected or not (V8's sampling heap profiler):
// unlike time, the same on a quiet and on a loaded machine, so progress shows through noise.
const session = new Session();
session.connect();
for (const overlap of [true, false]) {
  const doc = layeredDocument(42, { nodes: 10000, hosts: HOSTS, gpus: GPUS });
  compile(doc, { overlap });
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  const runs = 3;
  for (let i = 0; i < runs; i++) compile(doc, { overlap });
  const { profile } = await session.post('HeapProfiler.stopSampling');
  let bytes = 0;
  const walk = (n: { selfSize: number; children: (typeof n)[] }) => {
    bytes += n.selfSize;
    n.children.forEach(walk);
  };
  walk(profile.head);
  console.log(
    `${overlap ? 'overlap' : 'no overlap'}: a 10,000-node compile allocates ${(bytes / runs / 1e6).toFixed(1)} MB (sampled, collected objects included)`,
  );
}
session.disconnect();

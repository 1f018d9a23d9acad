// bench:scan: a scan over an expensive operator: a calibration and three
// tiers, each labelled on every row:
//   calibration reg2d.compose per PE kind: the CPU twin and the WGSL on the bench's GPU (llvmpipe
//               here: a CPU emulation of a GPU), one application per firing over the serial
//               scan's N - 1 applications of a seeded series, in this process with the kernels
//               the agents run: seconds and descent iterations per application, mean, CV, range.
//   real        local agents, one per worker, CPU PEs: reg2d.compose (reg2d.frames -> reg2d.pair
//               -> scan, the frames as the operator's context) at p = 1, 2 and up to --real-p
//               (<= 16), and mat.mulmod k = 16 at p = 1, 2 (an application far cheaper than a
//               firing: the overheads' case); every network eager, and Kogge-Stone in rounds too
//               (a scan.barrier relay per network level). Time per scan from the trace: the scan's first
//               fire start to its last fire end (relays included), median over --rounds runs of
//               one iteration (one iteration per run, so no iteration overlaps the next; a tier's
//               cases take turns, so the shared machine's load falls on all alike); the descent
//               iterations per application from the runs' reports; beside each row the
//               simulation of the same scan at the agent's own cost per application (p = 1), the
//               operator's fired time per application, and the speedup at equal cost (each
//               side's time over its own fired cost per application: what is left of the model's
//               claim when other processes slow the workers).
//   replay      the mat.mulmod scans where each application lasts reg2d.compose's calibrated CPU
//               mean x a stated scale (emulateDevices: a firing lasts at least apps x that, the
//               kernel itself still runs and is checked), so an application costs far more than
//               a message; p up to --replay-p agents (each a process: 2 cores hold a few),
//               as the real rows: every network eager, Kogge-Stone in rounds too.
//   simulation  core's simulateScan with the replay's per-application cost, p up to 512: strong
//               scaling (N = 256 and N = p), weak (N/p in {8, 32}), both strategies with
//               Kogge-Stone, eager vs rounds at cost CV 0, reg2d's measured CV, 0.5 and 1.
// Each row prints time, speedup over p = 1, efficiency, the model's bound ((N - 1) / depth) and
// beside it the simulation of the same scan (real, replay) or what the thesis (Copik, ch. 5)
// reports. Targets: replay within 5% of its simulation; real p = 2 within 10% of the model
// (speedup 1.0: each element is operated on twice).
//   npm run bench:scan -- [--n 64] [--k 16] [--reg-n 64] [--size 128] [--real-p 2] [--rounds 3]
//                         [--replay-p 4] [--replay-ms 20] [--max-p 512] [--cv-runs 20] [--backend opengl]
import {
  NETWORKS,
  operatorApplications,
  scanModel,
  scanPlan,
  simulateScan,
  type ProjectDocument,
  type RunResult,
  type ScanExecution,
  type ScanNetwork,
  type ScanStrategy,
} from '@pipeloom/core';
import { loadavg } from 'node:os';
import { getKernel, GpuRunner, runCpu } from '@pipeloom/kernels';
import { spawnLocalAgents } from '../src/local/spawn.js';
import { arg, benchBackend, compileOrThrow, median, openBenchDevice, table } from './common.js';
import { connect } from '../src/testing/fixtures.js';

/** `--name`: an integer in [lo, hi], else the bench stops saying which flag and its bounds. */
function bounded(name: string, fallback: number, lo: number, hi: number, integer = true): number {
  const v = arg(name, fallback);
  if (!(v >= lo && v <= hi) || (integer && !Number.isInteger(v))) {
    console.error(`bench:scan: --${name} must be ${integer ? 'an integer' : 'a number'} from ${lo} to ${hi}, not ${v}`);
    process.exit(2);
  }
  return v;
}

const N = bounded('n', 64, 2, 4096);
const K = bounded('k', 16, 3, 64);
const REG_N = bounded('reg-n', 64, 2, 1024);
const SIZE = bounded('size', 128, 32, 512);
const REAL_P = bounded('real-p', 2, 1, 16);
const ROUNDS = bounded('rounds', 3, 1, 100);
const REPLAY_P = bounded('replay-p', 4, 1, 64);
const REPLAY_MS = bounded('replay-ms', 20, 0.1, 10_000, false);
const MAX_P = bounded('max-p', 512, 1, 512);
const CV_RUNS = bounded('cv-runs', 20, 1, 1000);
const LINK = { latency: 1e-5, bandwidth: 1e9 };
const MULMOD_BYTES = (2 + K * K) * 4;
const REG2D_BYTES = (2 + 3) * 4;
const SCAN = 'scan1';
const GPU_KIND = benchBackend === 'opengl' ? 'llvmpipe (CPU emulation of a GPU)' : `real GPU (Dawn backend ${benchBackend})`;
const began = performance.now();
// The machine is shared: the load beside the results says how much the timings can be trusted.
const loadAtStart = loadavg()[0];

const hostsOf = (p: number) => Array.from({ length: p }, (_, i) => `h${i}`);
const arch = (p: number) => ({ hosts: hostsOf(p).map((id) => ({ id, cpus: 1, gpus: 0 })), network: { kind: 'ethernet', ...LINK } });

/** scan.source -> scan (mat.mulmod) -> scan.check on p hosts of one CPU each. */
function mulmodDoc(p: number, network: ScanNetwork, strategy: ScanStrategy, execution: ScanExecution): ProjectDocument {
  const hosts = hostsOf(p);
  return {
    format: 'pipeloom/v2',
    name: `bench:scan mat.mulmod ${network} ${execution} N=${N} p=${p}`,
    app: {
      nodes: [
        { id: 'src', kernel: 'scan.source', params: { operator: 'mat.mulmod', count: N, k: K } },
        { id: SCAN, type: 'scan', params: { operator: 'mat.mulmod', network, output: 'inclusive', strategy, execution, k: K } },
        { id: 'check', kernel: 'scan.check', params: { operator: 'mat.mulmod', count: N, k: K, output: 'inclusive', total: true } },
      ],
      edges: [
        { from: { node: 'src', port: 'out' }, to: { node: SCAN, port: 'in' } },
        { from: { node: SCAN, port: 'out' }, to: { node: 'check', port: 'out' } },
        { from: { node: SCAN, port: 'total' }, to: { node: 'check', port: 'total' } },
      ],
    },
    arch: arch(p),
    mapping: { src: 'cpu@h0', [SCAN]: hosts.map((h) => `cpu@${h}`), check: `cpu@h${p - 1}` },
    options: { overlap: false, iterations: 1 },
  } as unknown as ProjectDocument;
}

// The series of examples/scan-reg2d.json at the bench's size: REG_N elements register REG_N + 1 frames.
const SERIES = { width: SIZE, height: SIZE, frames: REG_N + 1 };

/** reg2d.frames -> reg2d.pair -> scan (reg2d.compose, the frames as its context) on p hosts of one CPU each. */
function reg2dDoc(p: number, network: ScanNetwork, execution: ScanExecution): ProjectDocument {
  const hosts = hostsOf(p);
  return {
    format: 'pipeloom/v2',
    name: `bench:scan reg2d.compose ${network} ${execution} N=${REG_N} p=${p}`,
    app: {
      nodes: [
        { id: 'frames', kernel: 'reg2d.frames', params: { ...SERIES, seed: 1 } },
        { id: 'pairs', kernel: 'reg2d.pair', params: { ...SERIES, first: 0, count: REG_N } },
        { id: SCAN, type: 'scan', params: { operator: 'reg2d.compose', network, output: 'inclusive', strategy: 'scan-then-propagate', execution, ...SERIES } },
      ],
      edges: [
        { from: { node: 'frames', port: 'frames' }, to: { node: 'pairs', port: 'frames' } },
        { from: { node: 'pairs', port: 'out' }, to: { node: SCAN, port: 'in' } },
        { from: { node: 'frames', port: 'frames' }, to: { node: SCAN, port: 'frames' } },
      ],
    },
    arch: arch(p),
    mapping: { frames: 'cpu@h0', pairs: 'cpu@h0', [SCAN]: hosts.map((h) => `cpu@${h}`) },
    options: { overlap: false, iterations: 1 },
  } as unknown as ProjectDocument;
}

interface Stats {
  mean: number;
  cv: number;
  min: number;
  max: number;
}
function stats(xs: number[]): Stats {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return { mean, cv: mean > 0 ? sd / mean : 0, min: Math.min(...xs), max: Math.max(...xs) };
}

interface Calibration {
  kind: string;
  seconds: Stats;
  iterations: Stats;
}

/**
 * reg2d.compose per PE kind: the serial scan's applications y_(i-1) (+) x_i, i = 1 .. N - 1, one
 * per firing, operands from the twin so both kinds make the same applications. The GPU's frames
 * stay on the device; its time is the dispatch plus the read-back of the iteration counter (an
 * agent's GPU firing reads its outputs back too). One warm-up application each is left out
 * (the JIT; the pipeline's first dispatch).
 */
async function calibrateReg2d(): Promise<Calibration[]> {
  const frames = runCpu(getKernel('reg2d.frames'), { ...SERIES, seed: 1 }, {}).outputs.frames as Float32Array;
  const xs = runCpu(getKernel('reg2d.pair'), { ...SERIES, first: 0, count: REG_N }, { frames }).outputs.out as Uint32Array;
  const compose = getKernel('reg2d.compose');
  const apply = { ...SERIES, mode: 'apply', count: 1 };
  const x = (i: number) => xs.slice(i * 5, i * 5 + 5);
  const iterationsOf = (values: Record<string, unknown> | undefined) => Number(values?.iterations);

  process.stderr.write(`calibration: reg2d.compose on the CPU twin, ${REG_N - 1} applications of ${SIZE} x ${SIZE} frames\n`);
  const operands: [Uint32Array, Uint32Array][] = [];
  const cpu = { seconds: [] as number[], iterations: [] as number[] };
  runCpu(compose, apply, { a: x(0), b: x(1), frames });
  let y: Uint32Array = x(0);
  for (let i = 1; i < REG_N; i++) {
    const t = performance.now();
    const r = runCpu(compose, apply, { a: y, b: x(i), frames });
    cpu.seconds.push((performance.now() - t) / 1000);
    cpu.iterations.push(iterationsOf(r.report?.values));
    operands.push([y, x(i)]);
    y = r.outputs.out as Uint32Array;
  }

  process.stderr.write(`calibration: reg2d.compose on ${GPU_KIND}, the same ${REG_N - 1} applications\n`);
  const device = await openBenchDevice();
  const gpu = { seconds: [] as number[], iterations: [] as number[] };
  try {
    const runner = await GpuRunner.create(device, compose, apply);
    const upload = (data: ArrayBufferView, label: string) => {
      const b = device.createBuffer({ size: Math.ceil(data.byteLength / 16) * 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST, label });
      device.queue.writeBuffer(b, 0, data.buffer, data.byteOffset, data.byteLength);
      return b;
    };
    const inputs = { a: upload(x(0), 'a'), b: upload(x(1), 'b'), frames: upload(frames, 'frames') };
    try {
      for (let j = -1; j < operands.length; j++) {
        const [l, r] = operands[Math.max(0, j)];
        device.queue.writeBuffer(inputs.a, 0, l);
        device.queue.writeBuffer(inputs.b, 0, r);
        const t = performance.now();
        const report = await runner.fireBuffers(inputs);
        const dt = (performance.now() - t) / 1000;
        if (report && !report.ok) throw new Error(`reg2d.compose on ${GPU_KIND}, application ${j + 1}: ${report.message}`);
        if (j < 0) continue;
        gpu.seconds.push(dt);
        gpu.iterations.push(iterationsOf(report?.values));
      }
    } finally {
      runner.destroy();
      for (const b of Object.values(inputs)) b.destroy();
    }
  } finally {
    device.destroy();
  }
  return [
    { kind: 'CPU twin', seconds: stats(cpu.seconds), iterations: stats(cpu.iterations) },
    { kind: GPU_KIND, seconds: stats(gpu.seconds), iterations: stats(gpu.iterations) },
  ];
}

const scanFires = (r: RunResult) => r.events.filter((e) => e.kind === 'fire' && e.node?.startsWith(`${SCAN}/`));
/** Seconds from the scan's first fire start to its last fire end. */
function scanTime(r: RunResult): number {
  const fires = scanFires(r);
  return (Math.max(...fires.map((e) => e.end)) - Math.min(...fires.map((e) => e.start))) / 1e6;
}
/** The descent iterations the scan's nodes reported (reg2d.compose counts them; 0 for operators that do not). */
const scanIterations = (r: RunResult) =>
  r.reports.filter((x) => x.node.startsWith(`${SCAN}/`)).reduce((s, x) => s + (typeof x.values.iterations === 'number' ? x.values.iterations : 0), 0);
/**
 * Seconds per application the operator's firings took in these runs (their durations' sum per
 * run over the applications): beside p = 1's, it tells a worker slowed down by sharing the
 * cores from one waiting for messages.
 */
function firedPerApplication(fires: Map<string, number[]>, n: number, p: number, network: ScanNetwork): number {
  const operator = new Set(scanPlan(n, p, network, 'scan-then-propagate', 'inclusive').nodes.map((x) => `${SCAN}/${x.key}`));
  let busy = 0;
  for (const [node, ds] of fires) if (operator.has(node)) busy += ds.reduce((a, b) => a + b, 0) / ROUNDS;
  return busy / planApplications(n, p, network);
}
/** Operator applications of one scan (what the plan's nodes make; relays make none). */
const planApplications = (n: number, p: number, network: ScanNetwork) =>
  scanPlan(n, p, network, 'scan-then-propagate', 'inclusive').nodes.reduce((s, x) => s + operatorApplications(x.mode, x.count), 0);

const fmt = (s: number) => (s >= 1 ? `${s.toFixed(3)} s` : `${(s * 1000).toFixed(2)} ms`);
const xf = (v: number) => `${v.toFixed(2)}x`;
const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
const rows: string[][] = [];
const HEAD = [
  'tier',
  'operator',
  'sweep',
  'network',
  'strategy',
  'exec',
  'N',
  'p',
  'time',
  'speedup',
  'eff.',
  'model bound',
  'beside it: simulation or thesis (ch. 5)',
];
const log = (r: string[]) => {
  rows.push(r);
  console.error(`[${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${r.join('  ')}`);
};
const realTargets: string[] = [];
const replayTargets: string[] = [];

// ---- calibration, before any agent starts (nothing else runs on the cores) ----
const calibration = await calibrateReg2d();
const [cpuCal] = calibration;

const agentHosts = Math.max(2, REPLAY_P, REAL_P);
process.stderr.write(`starting ${agentHosts} local agents (CPU PEs only, one per worker)\n`);
const local = await spawnLocalAgents(hostsOf(agentHosts), { cpuOnly: hostsOf(agentHosts) });
const coordinator = await connect(
  local.agents.map((a) => a.url),
  local.token,
);

interface Measured {
  /** Median seconds of the scan over the runs. */
  time: number;
  /** Per scan node, its fire durations (seconds) over the runs. */
  fires: Map<string, number[]>;
  /** Descent iterations the scan's nodes reported, mean per run. */
  iterations: number;
}
interface AgentCase {
  p: number;
  network: ScanNetwork;
  execution: ScanExecution;
  doc: ProjectDocument;
  emulate?: Record<string, number>;
}

/**
 * Every case ROUNDS times (one iteration per run), the cases taking turns: round r runs each
 * once, so a change in the shared machine's load falls on all of them alike rather than on
 * whichever ran then. A line per run shows progress.
 */
async function measureAll(tier: string, cases: AgentCase[]): Promise<Measured[]> {
  const igs = cases.map((c) => compileOrThrow(c.doc, false));
  const times = cases.map(() => [] as number[]);
  const out: Measured[] = cases.map(() => ({ time: 0, fires: new Map(), iterations: 0 }));
  for (let r = 0; r < ROUNDS; r++)
    for (const [i, c] of cases.entries()) {
      const res = await coordinator.run(igs[i], { iterations: 1, keepEvents: true, ...(c.emulate && { emulateDevices: c.emulate }) }).done;
      if (!res.ok) throw new Error(`${c.doc.name}: run failed: ${JSON.stringify(res.failure)}`);
      times[i].push(scanTime(res));
      out[i].iterations += scanIterations(res) / ROUNDS;
      for (const e of scanFires(res)) (out[i].fires.get(e.node!) ?? out[i].fires.set(e.node!, []).get(e.node!)!).push((e.end - e.start) / 1e6);
      process.stderr.write(
        `[${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${tier}: run ${r + 1}/${ROUNDS}, case ${i + 1}/${cases.length} (${c.network} ${c.execution} p = ${c.p}): ${fmt(times[i][r])}\n`,
      );
    }
  out.forEach((o, i) => (o.time = median(times[i])));
  return out;
}

/**
 * Agent rows' scans: p = 1 serial, eager; p >= 2 every network eager and Kogge-Stone (the
 * thesis's best) in rounds too: a run costs seconds of deploy on 2 cores, so rounds for every
 * network would double the bench's time (the simulation has rounds at every p).
 */
function agentCases(ps: number[], doc: (p: number, network: ScanNetwork, execution: ScanExecution) => ProjectDocument): AgentCase[] {
  const out: AgentCase[] = [];
  for (const p of ps)
    for (const network of p === 1 ? (['serial'] as const) : NETWORKS)
      for (const execution of ['eager', 'rounds'] as const)
        if (execution === 'eager' || (p > 1 && network === 'kogge-stone')) out.push({ p, network, execution, doc: doc(p, network, execution) });
  return out;
}

/** The real target: raw speedup against the model, and (what a shared machine leaves of it) the speedup at p = 1's cost per application. */
const realTarget = (what: string, speedup: number, equalCost: number, model: number) => {
  const off = Math.abs(speedup / model - 1);
  const offEqual = Math.abs(equalCost / model - 1);
  realTargets.push(
    `real ${what}: speedup ${xf(speedup)} vs model ${xf(model)} (${pct(off)} off): ${off <= 0.1 ? 'met' : 'not met'} (target 10%); at p = 1's cost per application ${xf(equalCost)} (${pct(offEqual)} off)`,
  );
};

/** Rows of a real tier: p = 1 first (the baseline); each row beside its simulation at p = 1's cost per application. */
function realRows(operator: string, n: number, bytes: number, cases: AgentCase[], runs: Measured[], iterations: boolean): number {
  const base = runs[0];
  const baseCost = firedPerApplication(base.fires, n, 1, 'serial');
  for (const [i, c] of cases.entries()) {
    const r = runs[i];
    const m = scanModel(n, c.p, c.network, 'scan-then-propagate', 'inclusive', c.execution);
    const sim = simulateScan(
      scanPlan(n, c.p, c.network, 'scan-then-propagate', 'inclusive'),
      { kind: 'mean', perApplication: baseCost },
      { execution: c.execution, link: LINK, elementBytes: bytes },
    );
    const cost = firedPerApplication(r.fires, n, c.p, c.network);
    const speedup = base.time / r.time;
    const equalCost = base.time / baseCost / (r.time / cost);
    const its = iterations ? `, ${(r.iterations / planApplications(n, c.p, c.network)).toFixed(1)} it/app` : '';
    log([
      'real',
      operator,
      `p=${c.p}`,
      c.network,
      'stp',
      c.execution,
      String(n),
      String(c.p),
      fmt(r.time),
      xf(speedup),
      (speedup / c.p).toFixed(2),
      xf(m.speedup),
      `sim ${fmt(sim.makespan)}; fired ${fmt(cost)}/app${its}; at equal cost ${xf(equalCost)}`,
    ]);
    if (c.p === 2) realTarget(`${operator} p = 2 ${c.network} ${c.execution}`, speedup, equalCost, m.speedup);
  }
  return baseCost;
}

try {
  // ---- real: reg2d.compose, p = 1, 2 .. REAL_P ----
  const regPs = [1, 2, 4, 8, 16].filter((p) => p <= REAL_P && p <= REG_N);
  const regCases = agentCases(regPs, reg2dDoc);
  const regRuns = await measureAll('real reg2d.compose', regCases);
  // The agent's own cost per application (p = 1: one firing of N - 1 applications): the
  // in-process twin above runs on the bench's thread, an agent's CPU PE on its worker's.
  const regAgent = { seconds: realRows('reg2d.compose', REG_N, REG2D_BYTES, regCases, regRuns, true), iterations: regRuns[0].iterations / (REG_N - 1) };

  // ---- real: mat.mulmod, p = 1, 2 ----
  const mulCases = agentCases([1, 2], (p, network, execution) => mulmodDoc(p, network, 'scan-then-propagate', execution));
  const mulRuns = await measureAll(`real mat.mulmod k = ${K}`, mulCases);
  const mulmodApp = realRows(`mat.mulmod k=${K}`, N, MULMOD_BYTES, mulCases, mulRuns, false);

  // ---- replay: mat.mulmod's kernels, each application lasting reg2d's CPU mean x scale ----
  const scale = REPLAY_MS / 1000 / cpuCal.seconds.mean;
  const appTime = REPLAY_MS / 1000;
  const replayPs = [1, 2, 4, 8, 16, 32, 64].filter((p) => p <= REPLAY_P && p <= N);
  const replayCases = agentCases(replayPs, (p, network, execution) => mulmodDoc(p, network, 'scan-then-propagate', execution)).map((c) => {
    const emulate: Record<string, number> = {};
    for (const n of scanPlan(N, c.p, c.network, 'scan-then-propagate', 'inclusive').nodes) {
      const apps = operatorApplications(n.mode, n.count);
      if (apps > 0) emulate[`${SCAN}/${n.key}`] = apps * appTime;
    }
    return { ...c, emulate };
  });
  const replayRuns = await measureAll('replay', replayCases);
  for (const [i, c] of replayCases.entries()) {
    const r = replayRuns[i];
    const sim = simulateScan(
      scanPlan(N, c.p, c.network, 'scan-then-propagate', 'inclusive'),
      { kind: 'mean', perApplication: appTime },
      { execution: c.execution, link: LINK, elementBytes: MULMOD_BYTES },
    );
    const m = scanModel(N, c.p, c.network, 'scan-then-propagate', 'inclusive', c.execution);
    const speedup = replayRuns[0].time / r.time;
    log([
      'replay',
      `mat.mulmod as reg2d x${scale.toFixed(1)}`,
      'strong',
      c.network,
      'stp',
      c.execution,
      String(N),
      String(c.p),
      fmt(r.time),
      xf(speedup),
      (speedup / c.p).toFixed(2),
      xf(m.speedup),
      `sim ${fmt(sim.makespan)}`,
    ]);
    const off = Math.abs(r.time / sim.makespan - 1);
    replayTargets.push(
      `replay ${c.network} ${c.execution} p = ${c.p}: ${fmt(r.time)} vs simulation ${fmt(sim.makespan)} (${pct(off)} off): ${off <= 0.05 ? 'met' : 'not met'} (target 5%)`,
    );
  }

  // ---- simulation: core, the replay's per-application cost, p up to MAX_P ----
  process.stderr.write('simulation: strong, weak, strategies, cost CV, eager vs rounds\n');
  const costs = { kind: 'mean', perApplication: appTime } as const;
  const simTime = (
    n: number,
    p: number,
    network: ScanNetwork,
    strategy: ScanStrategy = 'scan-then-propagate',
    execution: ScanExecution = 'eager',
    cv = 0,
    seed = 1,
  ) =>
    simulateScan(scanPlan(n, p, network, strategy, 'inclusive'), cv > 0 ? { ...costs, cv, seed } : costs, { execution, link: LINK, elementBytes: MULMOD_BYTES })
      .makespan;
  const pows = (max: number) => [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].filter((p) => p <= max);
  const SIM = 'as reg2d (sim)';
  const winners: string[][] = [];
  const strong = (sweep: string, nOf: (p: number) => number, thesis: string) => {
    for (const p of pows(MAX_P)) {
      const n = nOf(p);
      if (p > n) continue;
      const t1 = (n - 1) * appTime;
      let best: { network: ScanNetwork; t: number } | undefined;
      for (const network of p === 1 ? (['serial'] as const) : NETWORKS) {
        const t = simTime(n, p, network);
        const m = scanModel(n, p, network);
        if (!best || t < best.t) best = { network, t };
        if (p === 1 || network === 'kogge-stone' || p >= 64 || p === 8)
          log(['simulation', SIM, sweep, network, 'stp', 'eager', String(n), String(p), fmt(t), xf(t1 / t), (t1 / t / p).toFixed(2), xf(m.speedup), thesis]);
      }
      winners.push([sweep, String(n), String(p), best!.network, xf(t1 / best!.t), thesis]);
    }
  };
  strong('strong N=256', () => 256, 'KS best at large p; Sklansky below at equal span');
  strong('strong N=p', (p) => Math.max(p, 2), 'Blelloch slightly below KS but ahead at N = p');
  for (const per of [8, 32])
    for (const p of pows(MAX_P)) {
      const n = per * p;
      const t = simTime(n, p, 'kogge-stone');
      const m = scanModel(n, p, 'kogge-stone');
      const serial = (n - 1) * appTime;
      // Weak scaling's efficiency: the p = 1 time of its block over the time (ideal: constant).
      log([
        'simulation',
        SIM,
        `weak N/p=${per}`,
        'kogge-stone',
        'stp',
        'eager',
        String(n),
        String(p),
        fmt(t),
        xf(serial / t),
        (((per - 1) * appTime) / t).toFixed(2),
        xf(m.speedup),
        'serial OpenMPI 196 -> 2041 s (N 128 -> 4096)',
      ]);
    }
  for (const p of pows(MAX_P).filter((q) => q >= 2)) {
    const n = Math.max(256, p);
    for (const strategy of ['scan-then-propagate', 'reduce-then-scan'] as const) {
      const t = simTime(n, p, 'kogge-stone', strategy);
      const m = scanModel(n, p, 'kogge-stone', strategy);
      log([
        'simulation',
        SIM,
        'strategies',
        'kogge-stone',
        strategy === 'reduce-then-scan' ? 'rts' : 'stp',
        'eager',
        String(n),
        String(p),
        fmt(t),
        xf(((n - 1) * appTime) / t),
        (((n - 1) * appTime) / t / p).toFixed(2),
        xf(m.speedup),
        'alternative strategy: no gain',
      ]);
    }
  }
  // reg2d's own CV (the calibrated CPU one) beside the 0, 0.5, 1.
  const cvs = [0, Number(cpuCal.seconds.cv.toFixed(2)), 0.5, 1].filter((c, i, all) => all.indexOf(c) === i);
  for (const p of [8, 64, 512].filter((q) => q <= MAX_P)) {
    const n = Math.max(256, p);
    for (const cv of cvs)
      for (const execution of ['eager', 'rounds'] as const) {
        const ts = Array.from({ length: cv > 0 ? CV_RUNS : 1 }, (_, seed) => simTime(n, p, 'kogge-stone', 'scan-then-propagate', execution, cv, seed + 1));
        const t = median(ts);
        const m = scanModel(n, p, 'kogge-stone', 'scan-then-propagate', 'inclusive', execution);
        const label = cv === cvs[1] && cv !== 0 ? `cv=${cv} (reg2d's)` : `cv=${cv}`;
        log([
          'simulation',
          SIM,
          label,
          'kogge-stone',
          'stp',
          execution,
          String(n),
          String(p),
          fmt(t),
          xf(((n - 1) * appTime) / t),
          (((n - 1) * appTime) / t / p).toFixed(2),
          xf(m.speedup),
          'barriers amplify imbalance',
        ]);
      }
  }
  // The thesis's headline: 13 h serial -> < 7 min on 512 cores (>= 111x, efficiency 0.22).
  if (MAX_P >= 512) {
    const n = 4096;
    const t = simTime(n, 512, 'kogge-stone');
    log([
      'simulation',
      SIM,
      'headline',
      'kogge-stone',
      'stp',
      'eager',
      String(n),
      '512',
      fmt(t),
      xf(((n - 1) * appTime) / t),
      (((n - 1) * appTime) / t / 512).toFixed(2),
      xf(scanModel(n, 512, 'kogge-stone').speedup),
      '13 h -> < 7 min on 512 cores (>= 111x, 0.22)',
    ]);
  }

  const msOf = (s: number) => `${(s * 1e3).toFixed(2)} ms`;
  console.log(
    `\nbench:scan ${new Date().toISOString().slice(0, 10)}: reg2d.compose N = ${REG_N} on ${SIZE} x ${SIZE} frames, mat.mulmod k = ${K} N = ${N}; CPU PEs, one agent per worker; ${ROUNDS} runs of one iteration per row (median); ${((performance.now() - began) / 1000).toFixed(0)} s; 1-minute load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end\n`,
  );
  console.log(`Calibration: reg2d.compose per PE kind, ${REG_N - 1} applications (the serial scan's), one per firing:\n`);
  console.log(
    table(
      ['PE kind', 'time mean', 'CV', 'range', 'iterations mean', 'CV', 'range', 'per iteration'],
      [
        ...calibration.map((c) => [
          c.kind,
          msOf(c.seconds.mean),
          c.seconds.cv.toFixed(2),
          `${msOf(c.seconds.min)} - ${msOf(c.seconds.max)}`,
          c.iterations.mean.toFixed(1),
          c.iterations.cv.toFixed(2),
          `${c.iterations.min} - ${c.iterations.max}`,
          `${((c.seconds.mean / c.iterations.mean) * 1e6).toFixed(0)} us`,
        ]),
        [
          'CPU PE of an agent (real p = 1: one firing)',
          msOf(regAgent.seconds),
          '-',
          '-',
          regAgent.iterations.toFixed(1),
          '-',
          '-',
          `${((regAgent.seconds / regAgent.iterations) * 1e6).toFixed(0)} us`,
        ],
      ],
    ),
  );
  console.log(`The real rows' simulation (sim) uses the agent's ${msOf(regAgent.seconds)} per application.`);
  console.log(`\nmat.mulmod k = ${K} on a CPU PE: ${(mulmodApp * 1e6).toFixed(1)} us per application (p = 1 local scan of ${N}).`);
  console.log(
    `Replay: mat.mulmod's kernels run and are checked; each application lasts reg2d.compose's CPU mean ${msOf(cpuCal.seconds.mean)} x ${scale.toFixed(1)} = ${REPLAY_MS} ms; the simulation uses the same ${REPLAY_MS} ms.\n`,
  );
  console.log(table(HEAD, rows));
  console.log('\nWinning network per p (simulation, eager, scan-then-propagate):\n');
  console.log(table(['sweep', 'N', 'p', 'winner', 'speedup', 'thesis (ch. 5)'], winners));
  console.log('\nTargets:');
  for (const t of [...replayTargets, ...realTargets]) console.log(`- ${t}`);
} finally {
  coordinator.close();
  await local.stop();
}

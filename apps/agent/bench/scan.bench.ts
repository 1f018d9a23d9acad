// bench:scan — issue 24's benchmark: a scan over an expensive operator in three tiers, each
// labelled on every row:
//   real        p = 1, 2 local agents (CPU PEs only, one agent per worker), mat.mulmod k = 16
//               scans of N elements, every network, eager; time per scan from the trace: the
//               scan's first fire start to its last fire end, median over --rounds runs of one
//               iteration (one iteration per run, so no iteration overlaps the next).
//   replay      the same scans where each application lasts its measured time x a stated scale
//               (emulateDevices: a firing lasts at least apps x per-application x scale, the
//               kernel itself still runs and is checked), so an application costs far more than
//               a message; p up to --replay-p agents (each a process: 2 cores hold a few).
//   simulation  core's simulateScan with the same per-application cost, p up to 512: strong
//               scaling (N = 256 and N = p), weak (N/p in {8, 32}), both strategies with
//               Kogge-Stone, eager vs rounds (simulation only: a compiled run cannot hold a
//               network level back yet), cost CV 0, 0.5, 1.
// Each row prints time, speedup over p = 1, efficiency, the model's bound ((N - 1) / depth) and
// beside it what the thesis (Copik, ch. 5) reports. Targets: replay within 5% of its simulation;
// real p = 2 within 10% of the model (speedup 1.0: each element is operated on twice).
//   npm run bench:scan -- [--n 64] [--k 16] [--rounds 3] [--replay-p 4] [--replay-ms 20] [--max-p 512] [--cv-runs 20]
import { NETWORKS, operatorApplications, scanModel, scanPlan, simulateScan, type ProjectDocument, type RunResult, type ScanExecution, type ScanNetwork, type ScanStrategy } from '@pipeloom/core';
import { spawnLocalAgents } from '../src/local/spawn.js';
import { arg, compileOrThrow, median, table } from './common.js';
import { connect } from '../src/testing/fixtures.js';

const N = arg('n', 64);
const K = arg('k', 16);
const ROUNDS = arg('rounds', 3);
const REPLAY_P = arg('replay-p', 4);
const REPLAY_MS = arg('replay-ms', 20);
const MAX_P = arg('max-p', 512);
const CV_RUNS = arg('cv-runs', 20);
const LINK = { latency: 1e-5, bandwidth: 1e9 };
const ELEMENT_BYTES = (2 + K * K) * 4;
const SCAN = 'scan1';

/** scan.source -> scan (mat.mulmod) -> scan.check on p hosts of one CPU each. */
function scanDoc(n: number, p: number, network: ScanNetwork, strategy: ScanStrategy, execution: ScanExecution): ProjectDocument {
  const hosts = Array.from({ length: p }, (_, i) => `h${i}`);
  return {
    format: 'pipeloom/v2',
    name: `bench:scan ${network} N=${n} p=${p}`,
    app: {
      nodes: [
        { id: 'src', kernel: 'scan.source', params: { operator: 'mat.mulmod', count: n, k: K } },
        { id: SCAN, type: 'scan', params: { operator: 'mat.mulmod', network, output: 'inclusive', strategy, execution, k: K } },
        { id: 'check', kernel: 'scan.check', params: { operator: 'mat.mulmod', count: n, k: K, output: 'inclusive', total: true } },
      ],
      edges: [
        { from: { node: 'src', port: 'out' }, to: { node: SCAN, port: 'in' } },
        { from: { node: SCAN, port: 'out' }, to: { node: 'check', port: 'out' } },
        { from: { node: SCAN, port: 'total' }, to: { node: 'check', port: 'total' } },
      ],
    },
    arch: { hosts: hosts.map((id) => ({ id, cpus: 1, gpus: 0 })), network: { kind: 'ethernet', ...LINK } },
    mapping: { src: 'cpu@h0', [SCAN]: hosts.map((h) => `cpu@${h}`), check: `cpu@h${p - 1}` },
    options: { overlap: false, iterations: 1 },
  } as unknown as ProjectDocument;
}

const scanFires = (r: RunResult) => r.events.filter((e) => e.kind === 'fire' && e.node?.startsWith(`${SCAN}/`));
/** Seconds from the scan's first fire start to its last fire end. */
function scanTime(r: RunResult): number {
  const fires = scanFires(r);
  return (Math.max(...fires.map((e) => e.end)) - Math.min(...fires.map((e) => e.start))) / 1e6;
}

const hostsNeeded = Math.max(2, REPLAY_P);
const local = await spawnLocalAgents(
  Array.from({ length: hostsNeeded }, (_, i) => `h${i}`),
  { cpuOnly: Array.from({ length: hostsNeeded }, (_, i) => `h${i}`) },
);
const coordinator = await connect(local.agents.map((a) => a.url), local.token);

/** Median scan time over ROUNDS runs (one iteration each), and the per-node fire durations of every run. */
async function measure(doc: ProjectDocument, emulate?: Record<string, number>): Promise<{ time: number; fires: Map<string, number[]> }> {
  const ig = compileOrThrow(doc, false);
  const times: number[] = [];
  const fires = new Map<string, number[]>();
  for (let r = 0; r < ROUNDS; r++) {
    const res = await coordinator.run(ig, { iterations: 1, keepEvents: true, ...(emulate && { emulateDevices: emulate }) }).done;
    if (!res.ok) throw new Error(`run failed: ${JSON.stringify(res.failure)}`);
    times.push(scanTime(res));
    for (const e of scanFires(res)) (fires.get(e.node!) ?? fires.set(e.node!, []).get(e.node!)!).push((e.end - e.start) / 1e6);
  }
  return { time: median(times), fires };
}

const fmt = (s: number) => (s >= 1 ? `${s.toFixed(3)} s` : `${(s * 1000).toFixed(2)} ms`);
const x = (v: number) => `${v.toFixed(2)}x`;
const rows: string[][] = [];
const HEAD = ['tier', 'sweep', 'network', 'strategy', 'exec', 'N', 'p', 'time', 'speedup', 'eff.', 'model bound', 'thesis (ch. 5)'];
const log = (r: string[]) => {
  rows.push(r);
  console.error(r.join('  '));
};

try {
  // ---- real: p = 1, 2 ----
  const real1 = await measure(scanDoc(N, 1, 'serial', 'scan-then-propagate', 'eager'));
  // Calibration: seconds per application on a CPU PE, from p = 1's local scan (N - 1 applications).
  const local0 = median(real1.fires.get(`${SCAN}/local.w0`)!);
  const perApp = local0 / (N - 1);
  console.log(`calibration: mat.mulmod k = ${K} on a CPU PE: ${(perApp * 1e6).toFixed(1)} us per application (p = 1 local scan of ${N}: ${fmt(local0)}); scan time at p = 1 ${fmt(real1.time)}`);
  log(['real', 'p=1', '-', 'stp', 'eager', String(N), '1', fmt(real1.time), x(1), '1.00', x(1), 'serial baseline']);
  const realTargets: string[] = [];
  for (const network of NETWORKS) {
    const m = scanModel(N, 2, network, 'scan-then-propagate', 'inclusive', 'eager');
    const r = await measure(scanDoc(N, 2, network, 'scan-then-propagate', 'eager'));
    const speedup = real1.time / r.time;
    log(['real', 'p=2', network, 'stp', 'eager', String(N), '2', fmt(r.time), x(speedup), (speedup / 2).toFixed(2), x(m.speedup), '1.0x at p = 2 (each element operated on twice)']);
    const within = Math.abs(speedup / m.speedup - 1);
    realTargets.push(`real p = 2 ${network}: speedup ${x(speedup)} vs model ${x(m.speedup)} (${(within * 100).toFixed(1)}% off): ${within <= 0.1 ? 'met' : 'not met'} (target 10%)`);
  }

  // ---- replay: each application lasts perApp x scale ----
  const scale = REPLAY_MS / 1000 / perApp;
  const appTime = perApp * scale;
  console.log(`replay: each application lasts its measured ${(perApp * 1e6).toFixed(1)} us x ${scale.toFixed(1)} = ${REPLAY_MS} ms (a message on loopback: well under 1 ms)`);
  const replayTargets: string[] = [];
  let replay1 = 0;
  const replayPs = [1, 2, 4, 8].filter((p) => p <= REPLAY_P && p <= N);
  for (const p of replayPs)
    for (const network of p === 1 ? (['serial'] as const) : NETWORKS)
      // Eager only: a compiled run cannot hold a network level back yet, so rounds is simulated only.
      for (const execution of ['eager'] as const) {
        const plan = scanPlan(N, p, network, 'scan-then-propagate', 'inclusive');
        const emulate: Record<string, number> = {};
        for (const n of plan.nodes) {
          const apps = operatorApplications(n.mode, n.count);
          if (apps > 0) emulate[`${SCAN}/${n.key}`] = apps * appTime;
        }
        const r = await measure(scanDoc(N, p, network, 'scan-then-propagate', execution), emulate);
        if (p === 1) replay1 = r.time;
        const sim = simulateScan(plan, { kind: 'mean', perApplication: appTime }, { execution, link: LINK, elementBytes: ELEMENT_BYTES });
        const m = scanModel(N, p, network, 'scan-then-propagate', 'inclusive', execution);
        const speedup = replay1 / r.time;
        log(['replay', `strong x${scale.toFixed(0)}`, network, 'stp', execution, String(N), String(p), fmt(r.time), x(speedup), (speedup / p).toFixed(2), x(m.speedup), `sim ${fmt(sim.makespan)}`]);
        const off = Math.abs(r.time / sim.makespan - 1);
        replayTargets.push(`replay ${network} ${execution} p = ${p}: ${fmt(r.time)} vs simulation ${fmt(sim.makespan)} (${(off * 100).toFixed(1)}% off): ${off <= 0.05 ? 'met' : 'not met'} (target 5%)`);
      }

  // ---- simulation: core, the replay's per-application cost, p up to MAX_P ----
  const costs = { kind: 'mean', perApplication: appTime } as const;
  const simTime = (n: number, p: number, network: ScanNetwork, strategy: ScanStrategy = 'scan-then-propagate', execution: ScanExecution = 'eager', cv = 0, seed = 1) =>
    simulateScan(scanPlan(n, p, network, strategy, 'inclusive'), cv > 0 ? { ...costs, cv, seed } : costs, { execution, link: LINK, elementBytes: ELEMENT_BYTES }).makespan;
  const pows = (max: number) => [1, 2, 4, 8, 16, 32, 64, 128, 256, 512].filter((p) => p <= max);
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
        if (p === 1 || network === 'kogge-stone' || p >= 64 || p === 8) log(['simulation', sweep, network, 'stp', 'eager', String(n), String(p), fmt(t), x(t1 / t), (t1 / t / p).toFixed(2), x(m.speedup), thesis]);
      }
      winners.push([sweep, String(n), String(p), best!.network, x(t1 / best!.t), thesis]);
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
      log(['simulation', `weak N/p=${per}`, 'kogge-stone', 'stp', 'eager', String(n), String(p), fmt(t), x(serial / t), (((per - 1) * appTime) / t).toFixed(2), x(m.speedup), 'serial OpenMPI 196 -> 2041 s (N 128 -> 4096)']);
    }
  for (const p of pows(MAX_P).filter((q) => q >= 2)) {
    const n = Math.max(256, p);
    for (const strategy of ['scan-then-propagate', 'reduce-then-scan'] as const) {
      const t = simTime(n, p, 'kogge-stone', strategy);
      const m = scanModel(n, p, 'kogge-stone', strategy);
      log(['simulation', 'strategies', 'kogge-stone', strategy === 'reduce-then-scan' ? 'rts' : 'stp', 'eager', String(n), String(p), fmt(t), x(((n - 1) * appTime) / t), (((n - 1) * appTime) / t / p).toFixed(2), x(m.speedup), 'alternative strategy: no gain']);
    }
  }
  for (const p of [8, 64, 512].filter((q) => q <= MAX_P)) {
    const n = Math.max(256, p);
    for (const cv of [0, 0.5, 1])
      for (const execution of ['eager', 'rounds'] as const) {
        const ts = Array.from({ length: cv > 0 ? CV_RUNS : 1 }, (_, seed) => simTime(n, p, 'kogge-stone', 'scan-then-propagate', execution, cv, seed + 1));
        const t = median(ts);
        const m = scanModel(n, p, 'kogge-stone', 'scan-then-propagate', 'inclusive', execution);
        log(['simulation', `cv=${cv}`, 'kogge-stone', 'stp', execution, String(n), String(p), fmt(t), x(((n - 1) * appTime) / t), (((n - 1) * appTime) / t / p).toFixed(2), x(m.speedup), 'barriers amplify imbalance']);
      }
  }
  // The thesis's headline: 13 h serial -> < 7 min on 512 cores (>= 111x, efficiency 0.22).
  if (MAX_P >= 512) {
    const n = 4096;
    const t = simTime(n, 512, 'kogge-stone');
    log(['simulation', 'headline', 'kogge-stone', 'stp', 'eager', String(n), '512', fmt(t), x(((n - 1) * appTime) / t), (((n - 1) * appTime) / t / 512).toFixed(2), x(scanModel(n, 512, 'kogge-stone').speedup), '13 h -> < 7 min on 512 cores (>= 111x, 0.22)']);
  }

  console.log(`\nbench:scan: mat.mulmod k = ${K}, CPU PEs (one agent per worker), ${new Date().toISOString().slice(0, 10)}\n`);
  console.log(table(HEAD, rows));
  console.log('\nWinning network per p (simulation, eager, scan-then-propagate):\n');
  console.log(table(['sweep', 'N', 'p', 'winner', 'speedup', 'thesis (ch. 5)'], winners));
  console.log('\nTargets:');
  for (const t of [...replayTargets, ...realTargets]) console.log(`- ${t}`);
} finally {
  coordinator.close();
  await local.stop();
}

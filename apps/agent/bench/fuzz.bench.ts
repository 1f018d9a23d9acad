// bench:fuzz: the agent fuzzed on every surface, against one in-process agent on loopback (CPU
// only), with many more cases than the tests run:
//   front door  random requests, frames and splits from a raw socket (testing/front-door-fuzz.ts)
//   static run  login, deploy and start of a real P -> I -> C run, then its messages mutated (testing/run-fuzz.ts)
//   task bag    login, bag-deploy, start and real MLEM tasks, then their messages mutated
//   peer link   a run (either kind) with a peer agent dialled in, which sends mutated peer messages and frames
// After each case a fresh login and GET /healthz, side by side, timed: a case is a hang when
// either takes over 1 s or never comes. A crash is an exception the agent lets escape; a failed
// check is a case whose answers broke a rule (a close reason over 123 bytes, an echo, ...).
// Baseline: the same login and /healthz on the idle agent, before any case.
//   FUZZ_RUNS=<cases in all, default 10000> FUZZ_RUN_CASES=<cases per run surface, default 2% of FUZZ_RUNS> FUZZ_SEED=<seed> npm run bench:fuzz
import os from 'node:os';
import fc from 'fast-check';
import { startAgent } from '../src/server/server.js';
import { cpuDevices, fuzzCase, runStranger } from '../src/testing/front-door-fuzz.js';
import { runFuzzCase, runRunCase, stillServing, type FuzzedAgent, type RunSurface } from '../src/testing/run-fuzz.js';
import { table } from './common.js';

const total = Number(process.env.FUZZ_RUNS ?? 10_000);
const perRun = Number(process.env.FUZZ_RUN_CASES ?? Math.max(1, Math.round(total * 0.02)));
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const TOKEN = 'fuzz-bench-token-0123456789abcdef';
const HANG_MS = 1000;
/** Longest a case may take before it counts as a hang and the bench moves on. */
const CASE_MS = 120_000;

interface Row {
  surface: string;
  cases: number;
  crashes: number;
  failed: number;
  hangs: number;
  healthz: number[];
  answers: Record<string, number>;
}
const rows: Row[] = [];
let current: Row | null = null;
const findings: string[] = [];
const note = (what: string) => findings.length < 20 && findings.push(what);

// An exception that escapes the agent is a crash: counted against the case's surface, and the bench goes on.
const crashed = (e: unknown) => {
  if (current) current.crashes++;
  note(`crash (${current?.surface ?? 'setup'}, seed ${seed}): ${e instanceof Error ? e.stack : String(e)}`);
};
process.on('uncaughtException', crashed);
process.on('unhandledRejection', crashed);

// The login throttle off (wrong tokens are among the cases, and a correct login follows each); the rate high (mutations come in bursts).
const server = await startAgent({
  devices: cpuDevices('fz'),
  token: TOKEN,
  port: 0,
  limits: { loginFailuresFree: Number.MAX_SAFE_INTEGER, loginTimeoutMs: 2000, messagesPerSecond: 100_000 },
  handshakeTimeout: 1000,
});
const agent: FuzzedAgent = { url: server.url, port: server.port, token: TOKEN, host: 'fz' };

const p99 = (xs: number[]) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * 0.99) - 1)];
};

function progress(row: Row, of: number, force = false): void {
  if (!force && row.cases % 25) return;
  process.stderr.write(
    `\r${row.surface}: ${row.cases}/${of} cases, ${row.crashes} crashes, ${row.failed} failed checks, ${row.hangs} hangs, slowest /healthz ${Math.max(0, ...row.healthz).toFixed(0)} ms   `,
  );
}

/** Runs `n` cases from `arb`, a batch of generated cases at a time (a case may hold tens of KiB). */
async function surface<T>(name: string, n: number, arb: fc.Arbitrary<T>, run: (c: T) => Promise<{ answers?: Record<string, number> } | void>): Promise<void> {
  const row: Row = { surface: name, cases: 0, crashes: 0, failed: 0, hangs: 0, healthz: [], answers: {} };
  rows.push(row);
  current = row;
  const t0 = performance.now();
  for (let batch = 0; row.cases < n; batch++) {
    for (const c of fc.sample(arb, { numRuns: Math.min(100, n - row.cases), seed: seed + batch })) {
      let timer: NodeJS.Timeout | undefined;
      try {
        const r = await Promise.race([
          run(c),
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`hang: the case took over ${CASE_MS / 1000} s`)), CASE_MS))),
        ]);
        for (const [k, v] of Object.entries((r && r.answers) ?? {})) row.answers[k] = (row.answers[k] ?? 0) + v;
      } catch (e) {
        const msg = e instanceof Error ? e.message : String(e);
        if (msg.startsWith('hang')) row.hangs++;
        else row.failed++;
        note(
          `${name}, case ${row.cases} of batch seed ${seed + batch}: ${msg}\n  ${JSON.stringify(c, (_k, v) => (typeof v === 'string' && v.length > 200 ? `${v.slice(0, 40)}...(${v.length})` : v instanceof Uint8Array ? `bytes(${v.length})` : v)).slice(0, 600)}`,
        );
      } finally {
        clearTimeout(timer);
      }
      // Every case is followed by a fresh login and /healthz, timed.
      try {
        const s = await stillServing(agent);
        row.healthz.push(s.healthzMs);
        if (s.healthzMs > HANG_MS || s.loginMs > HANG_MS) {
          row.hangs++;
          note(
            `${name}, after case ${row.cases}: login ${s.loginMs.toFixed(0)} ms, /healthz ${s.healthzMs.toFixed(0)} ms (load average ${os.loadavg()[0].toFixed(1)})`,
          );
        }
      } catch (e) {
        row.hangs++;
        note(`${name}, after case ${row.cases}: ${e instanceof Error ? e.message : String(e)}`);
      }
      row.cases++;
      progress(row, n);
    }
  }
  progress(row, n, true);
  process.stderr.write(`  ${((performance.now() - t0) / 1000).toFixed(0)} s\n`);
}

// Baseline: the login and /healthz on the idle agent.
const idle: Row = { surface: 'idle agent (baseline)', cases: 0, crashes: 0, failed: 0, hangs: 0, healthz: [], answers: {} };
for (let i = 0; i < 200; i++) {
  const s = await stillServing(agent);
  idle.healthz.push(s.healthzMs);
  if (s.healthzMs > HANG_MS || s.loginMs > HANG_MS) idle.hangs++;
  idle.cases++;
}
rows.push(idle);

const t0 = performance.now();
const runSurfaces: [string, RunSurface][] = [
  ['static run', 'run'],
  ['task bag', 'bag'],
  ['peer link', 'peer'],
];
await surface('front door', Math.max(0, total - perRun * runSurfaces.length), fuzzCase(TOKEN, 64 << 10), (c) => runStranger(agent.port, c, 5000));
for (const [name, s] of runSurfaces) await surface(name, perRun, runFuzzCase(s), (c) => runRunCase(agent, c));
const seconds = (performance.now() - t0) / 1000;
current = null;
await server.close();

const fuzzed = rows.filter((r) => r !== idle);
const sum = (k: 'cases' | 'crashes' | 'failed' | 'hangs') => fuzzed.reduce((a, r) => a + r[k], 0);
console.log(
  `\n${table(
    ['surface', 'cases', 'crashes', 'failed checks', 'hangs', 'slowest /healthz (ms)', 'p99 /healthz (ms)'],
    [
      ...rows,
      {
        surface: 'all fuzzed',
        cases: sum('cases'),
        crashes: sum('crashes'),
        failed: sum('failed'),
        hangs: sum('hangs'),
        healthz: fuzzed.flatMap((r) => r.healthz),
        answers: {},
      },
    ].map((r) => [
      r.surface,
      String(r.cases),
      String(r.crashes),
      String(r.failed),
      String(r.hangs),
      Math.max(0, ...r.healthz).toFixed(0),
      p99(r.healthz).toFixed(0),
    ]),
  )}`,
);
for (const r of fuzzed)
  if (Object.keys(r.answers).length) console.log(`${r.surface}: the agent's answers on the cases' connections: ${JSON.stringify(r.answers)}`);
console.log(`\nseed ${seed}; ${sum('cases')} cases in ${seconds.toFixed(0)} s; a hang: a login or /healthz after a case over ${HANG_MS} ms, or none`);
console.log(
  `one in-process agent on loopback, CPU only; ${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at the end`,
);
for (const f of findings) console.error(`\n${f}`);
if (sum('crashes') || sum('failed')) process.exitCode = 1;

// bench:fuzz: the front-door fuzz (src/server/front-door.test.ts runs 5,000 cases in CI) with
// many more cases, against one in-process agent on loopback: random requests, frames and
// splits from a raw socket, each followed by a correct login. Baseline: the logins alone.
//   FUZZ_RUNS=<cases, default 50000> FUZZ_SEED=<seed> npm run bench:fuzz
import fc from 'fast-check';
import { startAgent } from '../src/server/server.js';
import { cpuDevices, fuzzCase, login, runCase } from '../src/testing/front-door-fuzz.js';
import { table } from './common.js';

const runs = Number(process.env.FUZZ_RUNS ?? 50_000);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const TOKEN = 'front-door-bench-token-0123456789';
// Any exception that escapes the agent is the finding: say so and fail.
process.on('uncaughtException', (e) => {
  console.error(`bench:fuzz: the agent threw (seed ${seed}): ${e.stack ?? e}`);
  process.exit(1);
});

// The login throttle off: wrong tokens are among the cases, and a correct login follows each.
const agent = await startAgent({ devices: cpuDevices('fz'), token: TOKEN, port: 0, limits: { loginFailuresFree: Number.MAX_SAFE_INTEGER, loginTimeoutMs: 2000 }, handshakeTimeout: 1000 });
const logins = Math.min(2000, runs);
let t0 = performance.now();
for (let i = 0; i < logins; i++) await login(agent.url, TOKEN);
const loginSeconds = (performance.now() - t0) / 1000;

t0 = performance.now();
let failure: unknown = null;
try {
  await fc.assert(fc.asyncProperty(fuzzCase(TOKEN, 64 << 10), (c) => runCase(agent.url, agent.port, TOKEN, c, 5000)), { numRuns: runs, seed });
} catch (e) {
  failure = e;
}
const fuzzSeconds = (performance.now() - t0) / 1000;
await agent.close();

console.log(`\n${table(
  ['what', 'count', 'seconds', 'per second'],
  [
    ['correct logins alone (baseline)', String(logins), loginSeconds.toFixed(1), (logins / loginSeconds).toFixed(0)],
    ['fuzz cases, each + a correct login', String(runs), fuzzSeconds.toFixed(1), (runs / fuzzSeconds).toFixed(0)],
  ],
)}`);
console.log(`\nseed ${seed}; one in-process agent on loopback, CPU only`);
if (failure) {
  console.error(`\nbench:fuzz: a case failed:\n${failure instanceof Error ? failure.message : String(failure)}`);
  process.exitCode = 1;
} else console.log(`front-door fuzz: ${runs} cases passed`);

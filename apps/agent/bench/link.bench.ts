// bench:link: agent-link throughput against a raw TCP socket on loopback (link-ends.ts has
// both transports' ends). Sender and receiver run in two processes, as two agents do: this
// one sends, a child (link-receiver.ts) receives. For context it also measures both ends in
// this one process, where each end's per-message work runs on the other's thread. Ratio
// target >= 0.9 (for ends in two processes).
//   LINK_BYTES=<bytes per measurement> LINK_ROUNDS=<rounds> LINK_SIZES=<bytes,...> npm run bench:link
import { fork } from 'node:child_process';
import { median, table } from './common.js';
import { receive, sender, type Transport } from './link-ends.js';

const sizes = (process.env.LINK_SIZES ?? `${64 << 10},${1 << 20},${16 << 20}`).split(',').map(Number);
const totalBytes = Number(process.env.LINK_BYTES ?? 64 << 20);
const rounds = Number(process.env.LINK_ROUNDS ?? 31);

const child = fork(new URL('./link-receiver.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
const replies: ((m: { port?: number; done?: boolean }) => void)[] = [];
child.on('message', (m: { port?: number; done?: boolean }) => replies.shift()!(m));
const reply = () => new Promise<{ port?: number; done?: boolean }>((r) => replies.push(r));

/** Bytes per second of one measurement: from the first byte sent until the receiver has the last. */
async function measure(transport: Transport, size: number, count: number, ends: 'two' | 'one'): Promise<number> {
  let port: number;
  let done: Promise<unknown>;
  if (ends === 'two') {
    const listening = reply();
    done = reply();
    child.send({ transport, size, count });
    port = (await listening).port!;
  } else ({ port, done } = await receive(transport, size, count));
  const s = await sender(transport, port, size, count);
  const t0 = performance.now();
  await s.start();
  await done;
  const seconds = (performance.now() - t0) / 1000;
  s.close();
  return (size * count) / seconds;
}

const mb = (xs: number[]) => `${(median(xs) / 1e6).toFixed(0)} (${(Math.min(...xs) / 1e6).toFixed(0)}-${(Math.max(...xs) / 1e6).toFixed(0)})`;

async function rowsFor(ends: 'two' | 'one'): Promise<string[][]> {
  const rows: string[][] = [];
  for (const size of sizes) {
    const count = Math.max(8, Math.round(totalBytes / size));
    // Warm both with a whole measurement (the link's code must be compiled, as in a long run),
    // then interleave them, alternating which goes first: the ratio of each round, the median.
    await measure('link', size, count, ends);
    await measure('tcp', size, count, ends);
    const link: number[] = [];
    const tcp: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const order: Transport[] = r % 2 ? ['link', 'tcp'] : ['tcp', 'link'];
      const got: Record<Transport, number> = { link: 0, tcp: 0 };
      for (const t of order) got[t] = await measure(t, size, count, ends);
      link.push(got.link);
      tcp.push(got.tcp);
      ratios.push(got.link / got.tcp);
    }
    rows.push([
      `${size >> 10} KiB`,
      String(count),
      mb(link),
      mb(tcp),
      `${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`,
    ]);
  }
  return rows;
}

const print = (title: string, rows: string[][]) =>
  console.log(`\n${title}\n${table(['frame', 'frames', 'agent link MB/s', 'raw TCP MB/s', 'ratio (per round)'], rows)}`);

print('sender and receiver in two processes, as two agents (target ratio >= 0.9):', await rowsFor('two'));
print("both ends in this one process (context: each end's per-message work on the other's thread):", await rowsFor('one'));
console.log(
  `\nloopback, ${totalBytes >> 20} MiB per measurement, ${rounds} rounds alternating which transport goes first, after a warm-up of each: median (min-max)`,
);
child.disconnect();

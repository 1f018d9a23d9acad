// bench:soak — a long run: 100,000 cycles of P-I-I-C (Fig 12 mapping) at a small size with
// both strategies. Prints each agent's heap and RSS after deploy and at the end (target:
// flat), the coordinator's own, the trace events received and any dropped (target: none).
// RSS is also sampled (from /proc) at every tenth of the run: growth that stops after a
// warm-up (allocator arenas, driver caches) and growth that goes on (a leak) look the same at
// the two ends, not along the way; the last column is the growth over the second half.
//   npm run bench:soak -- [--cycles N] [--size BYTES]
import { readFileSync } from 'node:fs';
import { arg, cluster, compileOrThrow, piicDoc, sideFor, table } from './common.js';

const cycles = arg('cycles', 100_000);
const side = sideFor(arg('size', 4096));
const mib = (b?: number) => (b === undefined ? 'n/a' : (b / (1 << 20)).toFixed(1));

/** Resident set of a process, bytes (Linux). */
const rssOf = (pid: number | undefined) => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
  } catch {
    return NaN;
  }
};

const rows: string[][] = [];
const samples: string[][] = [];
for (const overlap of [false, true]) {
  const probe = compileOrThrow(piicDoc(side, 5, 1), overlap);
  const iterations = cycles - probe.fillCycles + 1;
  const ig = compileOrThrow(piicDoc(side, 5, iterations), overlap);
  const r0cycles = cycles;
  const c = await cluster(ig);
  try {
    global.gc?.();
    const before = process.memoryUsage();
    let received = 0;
    const t0 = performance.now();
    // RSS of each agent at every tenth of the run.
    const series = new Map(c.local.agents.map((a) => [a.host, [] as number[]]));
    let tenth = 0;
    const sample = () => {
      for (const a of c.local.agents) series.get(a.host)!.push(rssOf(a.process.pid));
    };
    sample();
    const r = await c.coordinator.run(ig, {
      iterations,
      keepEvents: false,
      onEvents: (e) => (received += e.length),
      onProgress: (p) => {
        while (tenth < 10 && p.cycle >= ((tenth + 1) * r0cycles) / 10) {
          tenth++;
          sample();
        }
      },
    }).done;
    while (tenth < 10) {
      tenth++;
      sample();
    }
    for (const [host, xs] of series) samples.push([overlap ? 'with' : 'without', `agent ${host}`, ...xs.map((x) => mib(x)), mib(xs[10] - xs[5])]);
    const seconds = (performance.now() - t0) / 1000;
    if (!r.ok) throw new Error(`run failed: ${JSON.stringify(r.failure)}`);
    global.gc?.();
    const after = process.memoryUsage();
    for (const [host, m] of Object.entries(r.memory).sort()) {
      rows.push([
        overlap ? 'with' : 'without',
        `agent ${host}`,
        String(r.cycles),
        seconds.toFixed(0),
        mib(m.start?.heapUsed),
        mib(m.end?.heapUsed),
        mib(m.start?.rss),
        mib(m.end?.rss),
        '',
        '',
      ]);
      for (const pe of Object.keys(m.end?.peHeaps ?? {}).sort()) {
        rows.push([overlap ? 'with' : 'without', `  ${pe} thread`, '', '', mib(m.start?.peHeaps?.[pe]), mib(m.end?.peHeaps?.[pe]), '', '', '', '']);
      }
    }
    rows.push([
      overlap ? 'with' : 'without',
      'coordinator',
      String(r.cycles),
      seconds.toFixed(0),
      mib(before.heapUsed),
      mib(after.heapUsed),
      mib(before.rss),
      mib(after.rss),
      String(received),
      String(r.dropped),
    ]);
    process.stderr.write(`${overlap ? 'with' : 'without'} overlap: ${r.cycles} cycles in ${seconds.toFixed(1)} s\n`);
  } finally {
    await c.close();
  }
}
console.log(`P-I-I-C on two local hosts, ${side}x${side} f32 matrices, ${cycles} cycles per strategy (MiB)`);
console.log(table(['overlap', 'process', 'cycles', 's', 'heap after deploy', 'heap end', 'RSS after deploy', 'RSS end', 'events', 'dropped'], rows));
console.log(`\nagent RSS (MiB) at each tenth of the run, and its growth over the second half`);
console.log(table(['overlap', 'process', ...Array.from({ length: 11 }, (_, i) => `${i * 10}%`), '2nd half'], samples));
process.exit(0);

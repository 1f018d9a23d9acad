// bench:soak — a long run: 100,000 cycles of P-I-I-C (Fig 12 mapping) at a small size with
// both strategies. Prints each agent's heap and RSS after deploy and at the end (target:
// flat), the coordinator's own, the trace events received and any dropped (target: none).
//   npm run bench:soak -- [--cycles N] [--size BYTES]
import { arg, cluster, compileOrThrow, piicDoc, sideFor, table } from './common.js';

const cycles = arg('cycles', 100_000);
const side = sideFor(arg('size', 4096));
const mib = (b?: number) => (b === undefined ? 'n/a' : (b / (1 << 20)).toFixed(1));

const rows: string[][] = [];
for (const overlap of [false, true]) {
  const probe = compileOrThrow(piicDoc(side, 5, 1), overlap);
  const iterations = cycles - probe.fillCycles + 1;
  const ig = compileOrThrow(piicDoc(side, 5, iterations), overlap);
  const c = await cluster(ig);
  try {
    global.gc?.();
    const before = process.memoryUsage();
    let received = 0;
    const t0 = performance.now();
    const r = await c.coordinator.run(ig, { iterations, keepEvents: false, onEvents: (e) => (received += e.length) }).done;
    const seconds = (performance.now() - t0) / 1000;
    if (!r.ok) throw new Error(`run failed: ${JSON.stringify(r.failure)}`);
    global.gc?.();
    const after = process.memoryUsage();
    for (const [host, m] of Object.entries(r.memory).sort()) {
      rows.push([overlap ? 'with' : 'without', `agent ${host}`, String(r.cycles), seconds.toFixed(0), mib(m.start?.heapUsed), mib(m.end?.heapUsed), mib(m.start?.rss), mib(m.end?.rss), '', '']);
      for (const pe of Object.keys(m.end?.peHeaps ?? {}).sort()) {
        rows.push([overlap ? 'with' : 'without', `  ${pe} thread`, '', '', mib(m.start?.peHeaps?.[pe]), mib(m.end?.peHeaps?.[pe]), '', '', '', '']);
      }
    }
    rows.push([overlap ? 'with' : 'without', 'coordinator', String(r.cycles), seconds.toFixed(0), mib(before.heapUsed), mib(after.heapUsed), mib(before.rss), mib(after.rss), String(received), String(r.dropped)]);
    process.stderr.write(`${overlap ? 'with' : 'without'} overlap: ${r.cycles} cycles in ${seconds.toFixed(1)} s\n`);
  } finally {
    await c.close();
  }
}
console.log(`P-I-I-C on two local hosts, ${side}x${side} f32 matrices, ${cycles} cycles per strategy (MiB)`);
console.log(table(['overlap', 'process', 'cycles', 's', 'heap start', 'heap end', 'RSS start', 'RSS end', 'events', 'dropped'], rows));
process.exit(0);

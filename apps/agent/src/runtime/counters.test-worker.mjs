// The other side of counters.test.ts: counter 1 raised for each round, after waiting for counter 0.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
// A pending Atomics.waitAsync does not keep a thread alive; a port listener does (as in a PE thread).
parentPort.on('message', () => {});
const { Counters } = await import('./counters.ts');
const { Abort } = await import('./abort.ts');
const { memory, rounds } = workerData;
const counters = new Counters(memory, rounds, new Abort());
for (let r = 1; r <= rounds; r++) {
  await counters.atLeast(0, r);
  counters.set(1, r);
  // Sometimes this side is late, so the other side's wait is pending when the signal comes.
  if (r % 3 === 0) await new Promise((res) => setImmediate(res));
}
parentPort.postMessage('done');

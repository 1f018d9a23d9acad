// A PE-like thread for local-barrier.test.ts: per round, writes its mark, meets the main
// thread at the barrier, then checks the main thread's value for the round.
import { parentPort, workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
// A pending Atomics.waitAsync does not keep a thread alive; a port listener does (as in a PE thread).
parentPort.on('message', () => {});
const { arriveAndWait } = await import('./local-barrier.ts');
const { sync, data, index, rounds } = workerData;
const sync32 = new Int32Array(sync);
const data32 = new Int32Array(data);
let bad = 0;
for (let r = 1; r <= rounds; r++) {
  data32[1 + index] = r;
  await arriveAndWait(sync32);
  if (data32[0] !== r) bad++;
  // Some rounds take longer on one thread than the other.
  if ((r + index) % 7 === 0) await new Promise((res) => setImmediate(res));
}
parentPort.postMessage({ bad });

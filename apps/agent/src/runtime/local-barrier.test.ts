import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { gather, localBarrierMemory, release } from './local-barrier.js';

describe('the local barrier between PE threads and the main thread', () => {
  it('lets no thread past a round before every thread wrote it, nor before the main thread released it', async () => {
    const threads = 3;
    const rounds = 3000;
    const sync = localBarrierMemory();
    const data = new SharedArrayBuffer(4 * (1 + threads));
    const sync32 = new Int32Array(sync);
    const data32 = new Int32Array(data);
    const results = Array.from(
      { length: threads },
      (_, index) =>
        new Promise<{ bad: number }>((resolve, reject) => {
          const w = new Worker(new URL('./local-barrier.test-worker.mjs', import.meta.url), { workerData: { sync, data, index, rounds } });
          w.once('message', (m) => void w.terminate().then(() => resolve(m)));
          w.once('error', reject);
        }),
    );
    let early = 0;
    for (let r = 1; r <= rounds; r++) {
      await gather(sync32, threads);
      for (let i = 0; i < threads; i++) if (data32[1 + i] !== r) early++;
      data32[0] = r;
      // Sometimes the cluster step takes a while.
      if (r % 5 === 0) await new Promise((res) => setTimeout(res, 0));
      release(sync32);
    }
    expect(early).toBe(0);
    for (const r of await Promise.all(results)) expect(r.bad).toBe(0);
  }, 60_000);
});

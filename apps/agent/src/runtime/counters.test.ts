import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { Abort } from './abort.js';
import { Counters, counterMemory } from './counters.js';

describe('self-timed counters between threads', () => {
  it('lose no wake-up when a signal notifies only counted waiters (ping-pong, 20,000 rounds)', async () => {
    const rounds = 20_000;
    const memory = counterMemory(2);
    const counters = new Counters(memory, rounds, new Abort());
    const w = new Worker(new URL('./counters.test-worker.mjs', import.meta.url), { workerData: { memory, rounds } });
    const done = new Promise<void>((resolve, reject) => {
      w.once('message', () => resolve());
      w.once('error', reject);
    });
    for (let r = 1; r <= rounds; r++) {
      counters.set(0, r);
      await counters.atLeast(1, r);
      if (r % 5 === 0) await new Promise((res) => setImmediate(res));
    }
    await done;
    await w.terminate();
    expect(counters.values[1]).toBe(rounds);
  }, 120_000);

  it('a wait is cut short by the run abort, and leaves no waiter counted', async () => {
    const aborts = new Abort();
    const memory = counterMemory(1);
    const counters = new Counters(memory, 10, aborts);
    const waiting = counters.atLeast(0, 3);
    aborts.abort('stop');
    await expect(waiting).rejects.toThrow('stop');
    // [value, waiters] for one counter: the aborted wait no longer counts.
    expect(Array.from(new Int32Array(memory))).toEqual([0, 0]);
    counters.set(0, 5);
    await counters.atLeast(0, 5);
  });
});

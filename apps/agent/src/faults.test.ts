import { describe, expect, it } from 'vitest';
import { STOP_WAIT_MS } from '@pipeloom/core/internal';
import { exited, spawnLocalAgents } from './local/spawn.js';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect, piic, runUntilKilled } from './testing/fixtures.js';
import { finishedBefore, missing, traceKey } from './testing/finished.js';

// Faults with real agent processes on loopback.

const longRun = () => compileOrThrow(piic({ iterations: 1_000_000, size: 32 }), true);

describe('faults', () => {
  it('an agent killed mid-run: the run stops within 2 s naming the host, the trace so far is kept, a restarted agent takes a new run', async () => {
    const log: string[] = [];
    const local = await spawnLocalAgents(['h0', 'h1'], { log: (host, line) => log.push(`${host}: ${line}`) });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const ig = longRun();
      // Barrier mode: the completeness of h0's trace below counts on barriers closing cycles
      // (selftimed.test.ts has the self-timed case).
      const { result: r, killed, stoppedAfter, streamed, lastCycle: h1Cycle } = await runUntilKilled(c, ig, local.agents[1], 'barrier');
      c.close();
      expect(killed).toBe(true);
      expect(r.ok).toBe(false);
      expect(r.failure?.message).toMatch(/h1/);
      // Caught by the socket closing, not by the heartbeat's silence (120 s by default): no
      // tighter wall-clock bound, which a loaded machine would miss.
      expect(stoppedAfter).toBeLessThan(60_000);
      // The killed agent's streamed events are kept, every one.
      const kept = new Set(r.events);
      expect(streamed.filter((e) => !kept.has(e))).toEqual([]);
      expect(r.events.filter((e) => e.kind === 'fire' && e.node === 'C').length).toBeGreaterThan(5);
      // h1 had reached cycle h1Cycle, so h0 had finished every cycle before it: the trace has
      // all of h0's events of those cycles, the last batches its PE threads held included.
      expect(missing(finishedBefore(ig, 'h0', h1Cycle, 1_000_000), r.events.map(traceKey))).toEqual([]);
      // The local agent's log says how it went (a crash in native code prints nothing itself).
      await exited(local.agents[1].process);
      expect(log).toContain('h1: agent exited (signal SIGKILL)');

      // Restart h1 (same name, new process) and run again with the surviving h0.
      const h1 = await spawnLocalAgents(['h1'], { token: local.token });
      try {
        const c2 = await connect([local.agents[0].url, h1.agents[0].url], local.token);
        const again = await c2.run(compileOrThrow(piic({ iterations: 5 }), false), { iterations: 5 }).done;
        c2.close();
        expect(again.failure).toBeUndefined();
        expect(again.ok).toBe(true);
      } finally {
        await h1.stop();
      }
    } finally {
      await local.stop();
    }
  });

  it("an agent that never answers the stop (its process frozen) holds the result at most STOP_WAIT_MS; the other agent's trace is kept", async () => {
    const local = await spawnLocalAgents(['h0', 'h1']);
    const h1 = local.agents[1].process;
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const ig = longRun();
      let stoppedAt = 0;
      let asked = 0;
      const h = c.run(ig, {
        iterations: 1_000_000,
        sync: 'barrier',
        onProgress: (p) => {
          if (stoppedAt || p.cycle <= 10) return;
          stoppedAt = p.cycle;
          // Frozen, h1 keeps its socket open and never answers `stopped`.
          h1.kill('SIGSTOP');
          asked = performance.now();
          h.stop('enough');
        },
      });
      const r = await h.done;
      const waited = performance.now() - asked;
      c.close();
      expect(r.failure).toEqual({ host: 'coordinator', message: 'enough' });
      expect(waited).toBeGreaterThanOrEqual(STOP_WAIT_MS - 50);
      expect(missing(finishedBefore(ig, 'h0', stoppedAt, 1_000_000), r.events.map(traceKey))).toEqual([]);
    } finally {
      h1.kill('SIGCONT');
      await local.stop();
    }
  });

  it('a lost WebGPU device is reported naming the PE, not hung on; the agent takes the next run', async () => {
    const local = await spawnLocalAgents(['h0', 'h1'], { env: { PIPELOOM_FAULT: 'lose-device:gpu0@h1:10' } });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const r = await c.run(longRun(), { iterations: 1_000_000 }).done;
      expect(r.ok).toBe(false);
      expect(r.failure).toMatchObject({ host: 'h1', pe: 'gpu0@h1' });
      expect(r.failure?.message).toMatch(/gpu0@h1/);
      // The same agents take the next run (short enough to end before the injected fault's cycle).
      const again = await c.run(compileOrThrow(piic({ iterations: 3 }), false), { iterations: 3 }).done;
      expect(again.failure).toBeUndefined();
      c.close();
    } finally {
      await local.stop();
    }
  });
});

describe('faults that leave every agent up, on one pair of agents', () => {
  /** Agents that went: none of these tests may end one. */
  const exits: string[] = [];
  const agentsOf = agentsForSuite(['h0', 'h1'], { log: (host, line) => /agent exited/.test(line) && exits.push(`${host}: ${line}`) });
  const urls = () => agentsOf().agents.map((a) => a.url);

  it('the coordinator disappears mid-run: agents stop the run and free it, then take a new one', async () => {
    const c = await connect(urls(), agentsOf().token);
    await new Promise<void>((resolve) => {
      const h = c.run(longRun(), { iterations: 1_000_000, onProgress: (p) => p.cycle > 20 && resolve() });
      void h.done;
    });
    c.close();
    // A new coordinator is served at once: the agents dropped the abandoned run.
    const c2 = await connect(urls(), agentsOf().token);
    const r = await c2.run(compileOrThrow(piic({ iterations: 5 }), true), { iterations: 5 }).done;
    c2.close();
    expect(r.failure).toBeUndefined();
    // Both agents are still alive.
    for (const a of agentsOf().agents) expect(a.process.exitCode).toBeNull();
  });

  it('stop() ends a run on every agent with a reason', async () => {
    const c = await connect(urls(), agentsOf().token);
    try {
      const ig = longRun();
      let stoppedAt = 0;
      const h = c.run(ig, {
        iterations: 1_000_000,
        sync: 'barrier',
        onProgress: (p) => {
          if (stoppedAt || p.cycle <= 10) return;
          stoppedAt = p.cycle;
          h.stop('enough');
        },
      });
      const r = await h.done;
      expect(r.failure).toEqual({ host: 'coordinator', message: 'enough' });
      // Both hosts had got past cycle stoppedAt - 1 (progress counts cycles every host closed):
      // the trace keeps every event of both up to there, what their PE threads held included.
      const keys = r.events.map(traceKey);
      for (const host of ['h0', 'h1']) expect(missing(finishedBefore(ig, host, stoppedAt, 1_000_000), keys), host).toEqual([]);
      const again = await c.run(compileOrThrow(piic({ iterations: 3 }), true), { iterations: 3 }).done;
      expect(again.ok).toBe(true);
    } finally {
      c.close();
    }
  });

  // Twelve deploys, runs and stops: about 30 s alone, more beside other test files on 2 cores.
  it('runs stopped while GPU work is in flight, one after another, leave every agent up', async () => {
    // A PE thread torn down while one of its WebGPU promises is pending takes its whole
    // process down (dawn.node aborts), so stopping a run mid-firing must let them settle first.
    const c = await connect(urls(), agentsOf().token);
    try {
      // GPU firings of a few ms, so that a stop nearly always lands in one.
      const ig = compileOrThrow(piic({ iterations: 1_000_000, size: 256, nbLoop: 40 }), true);
      for (let round = 0; round < 12; round++) {
        const h = c.run(ig, { iterations: 1_000_000, onProgress: (p) => p.cycle > 2 && h.stop('enough') });
        const r = await h.done;
        expect(r.failure, `round ${round}; ${exits.join('; ')}`).toEqual({ host: 'coordinator', message: 'enough' });
      }
      const again = await c.run(compileOrThrow(piic({ iterations: 3 }), true), { iterations: 3 }).done;
      expect(again.failure).toBeUndefined();
    } finally {
      c.close();
    }
    expect(exits).toEqual([]);
  }, 180_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze, deviceTimes, checkDeploy } from '@pipeloom/core';
import { spawnLocalAgents, type LocalAgents } from './local/spawn.js';
import { compileOrThrow, connect, piic } from './testing/fixtures.js';

// Device emulation on real agents (loopback, llvmpipe): each GPU firing lasts at least its
// emulated time, the kernel still runs and C still checks every value.

let agents: LocalAgents;
beforeAll(async () => {
  agents = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 } });
});
afterAll(async () => {
  await agents?.stop();
});

describe('emulated devices', () => {
  const cases = (['barrier', 'self-timed'] as const).flatMap((sync) => [false, true].map((overlap) => ({ sync, overlap })));
  for (const { sync, overlap } of cases) {
    it(`P-I-I-C ${overlap ? 'with' : 'without'} overlap, ${sync}: every GPU firing lasts at least its calibrated time, values exact`, async () => {
      const doc = piic({ iterations: 4 });
      // A calibration's firing times for the two GPUs' nodes (P and C, on CPUs, are not emulated).
      const times = deviceTimes(analyze(doc).model!, { nodeTimes: { I1: 0.025, I2: 0.04, P: 5 } });
      expect(Object.keys(times).sort()).toEqual(['I1', 'I2']);
      const c = await connect(
        agents.agents.map((a) => a.url),
        agents.token,
      );
      try {
        const r = await c.run(compileOrThrow(doc, overlap), { iterations: 4, emulateDevices: times, sync }).done;
        expect(r.failure).toBeUndefined();
        expect(r.ok).toBe(true);
        const fires = r.events.filter((e) => e.kind === 'fire');
        // Every firing of every node ran, each once per iteration (C checked each matrix).
        expect(fires.map((e) => `${e.node} ${e.iteration}`).sort()).toEqual(['C', 'I1', 'I2', 'P'].flatMap((n) => [0, 1, 2, 3].map((i) => `${n} ${i}`)));
        for (const e of fires.filter((e) => e.node === 'I1')) expect(e.end - e.start).toBeGreaterThanOrEqual(25_000);
        for (const e of fires.filter((e) => e.node === 'I2')) expect(e.end - e.start).toBeGreaterThanOrEqual(40_000);
      } finally {
        c.close();
      }
    });
  }

  it('a deploy with a malformed emulated time is refused, naming the node', () => {
    const base = {
      type: 'deploy',
      runId: 'r',
      secret: 's',
      programs: [],
      hosts: [{ id: 'h0', url: 'ws://x' }],
      iterations: 1,
      cycles: 1,
      pes: {},
      buffers: {},
    };
    expect(checkDeploy({ ...base, emulateDevices: { I1: 0.01 } }).ok).toBe(true);
    const bad = checkDeploy({ ...base, emulateDevices: { I1: -1 } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.reason).toMatch(/emulateDevices.*I1.*must be a number from 0 to 3600/);
  });
});

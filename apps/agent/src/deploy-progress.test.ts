import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DeployProgress, ProjectDocument } from '@pipeloom/core';
import { loadKernelPackages } from './kernels/load.js';
import { spawnLocalAgents } from './local/spawn.js';
import { Coordinator, type SocketLike } from '@pipeloom/core';
import { nodeClock } from './cli/agents.js';
import { startAgent } from './server/server.js';
import { cpuDevices } from './testing/front-door-fuzz.js';
import { compileOrThrow, connect, example, piic, pipeloomAsync, root, wsConnect } from './testing/fixtures.js';

// Deploys on real agents that take long: a kernel whose GPU preparation is slow (the
// slow-prepare package, as a slow shader compile on a busy machine) keeps reporting progress and
// is waited for; an agent stopped (SIGSTOP) mid-deploy goes silent and fails the deploy naming it
// and its step; the CLI's --deploy-timeout caps a deploy that is still reporting.

const SLOW = `${root}apps/agent/src/testing/slow-prepare`;
await loadKernelPackages([SLOW]);

/** piic (or piic-single-host) with I2 (on gpu0@h1, gpu1@h0) preparing `ms` longer. */
function slowDoc(ms: number, name: 'piic' | 'piic-single-host' = 'piic'): ProjectDocument {
  const doc = name === 'piic' ? piic({ iterations: 2, size: 16 }) : example(name);
  const i2 = doc.app.nodes.find((n) => n.id === 'I2')!;
  i2.kernel = 'test.slowprep';
  i2.params = { ...i2.params, prepare_ms: ms };
  return doc;
}

/** `host` has only `pe`'s kernel preparation left (its other PEs are ready). */
const inKernels = (p: DeployProgress, host = 'h1', pe = 'gpu0@h1') =>
  p.hosts.some((h) => h.host === host && h.steps.length === 1 && h.steps[0].step === 'kernels' && h.steps[0].pe === pe);

describe('a deploy on real agents waits on progress', () => {
  it('a kernel preparation lasting well past the silence bound succeeds: the agent keeps reporting it', async () => {
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 }, args: ['--kernels', SLOW] });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const shown: DeployProgress[] = [];
      const r = await c.run(compileOrThrow(slowDoc(9000), false), { iterations: 2, deploySilence: 4000, onDeploy: (p) => shown.push(p) }).done;
      c.close();
      expect(r.failure).toBeUndefined();
      expect(r.ok).toBe(true);
      const preparing = shown.filter((p) => inKernels(p));
      // The step was reported, and repeated for longer than the silence bound.
      expect(preparing.length).toBeGreaterThan(1);
      expect(preparing.at(-1)!.elapsed - preparing[0].elapsed).toBeGreaterThan(4);
      expect(shown.at(-1)!.hosts.every((h) => h.deployed)).toBe(true);
    } finally {
      await local.stop();
    }
  }, 120_000);

  it('an agent stopped (SIGSTOP) during its kernel preparation fails the deploy on silence, naming the host, the PE and the step', async () => {
    // One host: no peer link notices first.
    const local = await spawnLocalAgents(['h0'], { gpus: { h0: 2 }, args: ['--kernels', SLOW] });
    const h0 = local.agents[0].process;
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      let stopped = false;
      const r = await c.run(compileOrThrow(slowDoc(600_000, 'piic-single-host'), false), {
        iterations: 2,
        deploySilence: 4000,
        onDeploy: (p) => {
          if (!stopped && inKernels(p, 'h0', 'gpu1@h0')) {
            stopped = true;
            h0.kill('SIGSTOP');
          }
        },
      }).done;
      c.close();
      expect(stopped).toBe(true);
      expect(r.ok).toBe(false);
      expect(r.failure).toEqual({ host: 'h0', pe: 'gpu1@h0', message: 'deploy: h0 silent for 4 s during kernel preparation of gpu1@h0' });
    } finally {
      h0.kill('SIGCONT');
      await local.stop();
    }
  }, 120_000);

  it("a peer that notices first (its link to the stopped agent went quiet) fails the run naming that agent's step too", async () => {
    const local = await spawnLocalAgents(['h0', 'h1'], { gpus: { h0: 1, h1: 1 }, args: ['--kernels', SLOW] });
    const h1 = local.agents.find((a) => a.host === 'h1')!.process;
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      let stopped = false;
      const r = await c.run(compileOrThrow(slowDoc(600_000), false), {
        iterations: 2,
        onDeploy: (p) => {
          // Once h0 has deployed: its link to h1 now fails its run when it goes quiet.
          if (!stopped && p.hosts[0].deployed && inKernels(p, 'h1', 'gpu0@h1')) {
            stopped = true;
            h1.kill('SIGSTOP');
          }
        },
      }).done;
      c.close();
      expect(stopped).toBe(true);
      expect(r.ok).toBe(false);
      expect(r.failure).toEqual({
        host: 'h1',
        message: 'lost the link from h0 to host h1 (no heartbeat for 1.5 s) (deploy: h1 during kernel preparation of gpu0@h1)',
      });
    } finally {
      h1.kill('SIGCONT');
      await local.stop();
    }
  }, 120_000);

  it("a peer whose deploy comes after the peer handshake's time is dialled again, and the run goes", async () => {
    // In-process agents on their CPUs, holding an early hello for 300 ms only.
    const token = 'late-peer-token';
    const agents = await Promise.all(['h0', 'h1'].map((h) => startAgent({ devices: cpuDevices(h), token, port: 0, handshakeTimeout: 300 })));
    // h1's deploy is held back until h0 has been setting up its link to h1 for over a second
    // (h0 reports it), so h0's first hellos were closed for want of the run there.
    let release: (() => void) | undefined;
    let held = false;
    const connectHolding = (url: string): SocketLike => {
      const s = wsConnect(url);
      if (url !== agents[1].url) return s;
      const send = s.send.bind(s);
      s.send = (text: string) => {
        if (!text.startsWith('{"type":"deploy"')) return send(text);
        held = true;
        release = () => send(text);
      };
      return s;
    };
    try {
      const c = await Coordinator.connect(
        agents.map((a) => a.url),
        { token, connect: connectHolding, clock: nodeClock },
      );
      const doc = piic({ iterations: 3, size: 16 });
      doc.mapping = { P: 'cpu@h0', I1: 'cpu@h0', I2: 'cpu@h1', C: 'cpu@h1' };
      for (const h of doc.arch.hosts) (h as { gpus?: number }).gpus = 0;
      const r = await c.run(compileOrThrow(doc, false), {
        iterations: 3,
        onDeploy: (p) => {
          if (release && p.elapsed > 1 && p.hosts[0].steps[0]?.step === 'links') {
            release();
            release = undefined;
          }
        },
      }).done;
      c.close();
      expect(r.failure?.message).toBeUndefined();
      expect(held).toBe(true);
      expect(r.ok).toBe(true);
    } finally {
      await Promise.all(agents.map((a) => a.close()));
    }
  }, 120_000);

  it("pipeloom run --deploy-timeout S fails a deploy still under way after S seconds, naming each host's step", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pipeloom-deploy-timeout-')), 'slow.json');
    writeFileSync(file, JSON.stringify(slowDoc(600_000)));
    const r = await pipeloomAsync('run', file, '--deploy-timeout', '10', '--kernels', SLOW);
    expect(r.status, r.stderr).toBe(1);
    // h1 never ends its kernel preparation; where it is at 10 s depends on the machine's load.
    const step = '(peer links|allocation|(device set-up|kernel preparation) of [^;]+)';
    expect(r.stderr).toMatch(
      new RegExp(`pipeloom run: failed on host [h01, ]+: deploy: (h0 still in ${step}; )?h1 still in ${step} after the 10 s --deploy-timeout\n`),
    );
    // The progress line named the steps while they ran.
    expect(r.stderr).toMatch(/deploying {2}\d+\.\d s {2}h0 [a-z].*, h1 [a-z]/);
  }, 120_000);
});

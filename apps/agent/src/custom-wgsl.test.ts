import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exited, spawnLocalAgents, type LocalAgents } from './local/spawn.js';
import { compileOrThrow, connect, example, root } from './testing/fixtures.js';

// Custom WGSL (custom.wgsl) with real agent processes on loopback: refused by default, run
// when the agent was started with --allow-wgsl. The example: P (cpu) -> K (user WGSL,
// out = in * 2 + 1, gpu0) -> C (cpu, checks iteration * 2 + 1).

const ig = () => compileOrThrow(example('custom-wgsl'), true);
/** Runs the example on these agents and expects every check to pass. */
async function expectRuns(local: LocalAgents, iterations: number) {
  const c = await connect(
    local.agents.map((a) => a.url),
    local.token,
  );
  const r = await c.run(ig(), { iterations }).done;
  c.close();
  expect(r.failure).toBeUndefined();
  expect(r.ok).toBe(true);
  return r;
}
const REFUSAL = 'agent h0 refuses custom WGSL in node "K": start it with --allow-wgsl';

describe('custom WGSL on agents', () => {
  it('is refused without --allow-wgsl, naming the host, the node and the flag; the agent then takes the next run', async () => {
    const local = await spawnLocalAgents(['h0'], { gpus: { h0: 1 } });
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const r = await c.run(ig(), { iterations: 3 }).done;
      c.close();
      expect(r.ok).toBe(false);
      expect(r.failure?.host).toBe('h0');
      expect(r.failure?.message).toContain(REFUSAL);
      expect(r.events.filter((e) => e.kind === 'fire')).toEqual([]);
      // Still up and free: a registered-kernel run on the same agent passes.
      const c2 = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const plain = example('custom-wgsl');
      plain.app.nodes[1] = { id: 'K', kernel: 'vector.produce', params: { length: 65536 } };
      plain.app.edges = [{ from: { node: 'K', port: 'out' }, to: { node: 'C', port: 'in' } }];
      plain.app.nodes.splice(0, 1);
      delete (plain.mapping as Record<string, string>).P;
      const check = plain.app.nodes.find((n) => n.id === 'C')!;
      check.params = { length: 65536, scale: 1, offset: 0 };
      const again = await c2.run(compileOrThrow(plain, true), { iterations: 3 }).done;
      c2.close();
      expect(again.failure).toBeUndefined();
      expect(again.ok).toBe(true);
    } finally {
      await local.stop();
    }
  });

  it('runs with --allow-wgsl and the checker passes on what the user WGSL computed', async () => {
    const local = await spawnLocalAgents(['h0'], { gpus: { h0: 1 }, args: ['--allow-wgsl'] });
    try {
      const r = await expectRuns(local, 5);
      expect(r.events.filter((e) => e.kind === 'fire' && e.node === 'C')).toHaveLength(5);
    } finally {
      await local.stop();
    }
  });

  it('pipeloom run: exits 1 with the refusal, and passes the flag to its local agents with --allow-wgsl', () => {
    const run = (...flags: string[]) =>
      spawnSync(process.execPath, [join(root, 'apps/agent/bin/pipeloom.js'), 'run', join(root, 'examples/custom-wgsl.json'), '--iterations', '5', ...flags], {
        cwd: root,
        encoding: 'utf8',
        timeout: 60_000,
      });
    const refused = run();
    expect(refused.status, refused.stderr).toBe(1);
    expect(refused.stderr).toContain(REFUSAL);
    const allowed = run('--allow-wgsl');
    expect(allowed.status, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/run complete/);
  });

  it('a kernel that never ends fails the run within its time limit naming the node; the agent exits for a restart, and a restarted agent runs', async () => {
    const endless = example('custom-wgsl');
    const k = endless.app.nodes[1];
    // info.z is always 0: the loop never ends, and writes so it cannot be optimised away.
    k.params = {
      ...k.params,
      source: String(k.params?.source).replace(
        'output[i] = input[i] * 2.0 + 1.0;',
        'output[i] = input[i] * 2.0 + 1.0;\n  while (info.z == 0u) { output[i] = output[i] + 1.0; }',
      ),
    };
    const lines: string[] = [];
    const local = await spawnLocalAgents(['h0'], { gpus: { h0: 1 }, args: ['--allow-wgsl', '--kernel-timeout', '1'], log: (_, l) => lines.push(l) });
    const agent = local.agents[0].process;
    try {
      const c = await connect(
        local.agents.map((a) => a.url),
        local.token,
      );
      const t0 = performance.now();
      const r = await c.run(compileOrThrow(endless, true), { iterations: 5 }).done;
      const failedAfter = performance.now() - t0;
      c.close();
      expect(r.ok).toBe(false);
      expect(r.failure).toMatchObject({ host: 'h0', pe: 'gpu0@h0', node: 'K' });
      expect(r.failure?.message).toContain("node K (custom.wgsl) on gpu0@h0 ran past the agent's kernel time limit (1 s)");
      expect(r.failure?.message).toContain('--kernel-timeout');
      // The trace up to the fault is kept: the producer fired before K hung.
      expect(r.events.some((e) => e.kind === 'fire' && e.node === 'P')).toBe(true);
      expect(failedAfter).toBeLessThan(20_000);
      // The GPU thread cannot be taken back: the agent kills itself for a restart, saying why.
      await exited(agent);
      expect(agent.signalCode).toBe('SIGKILL');
      expect(lines.join('\n')).toContain(
        'gpu0@h0 is held by a kernel that ran past the time limit: the agent kills itself (SIGKILL) so that its supervisor restarts it',
      );
      expect(lines.join('\n')).not.toContain('FATAL');
    } finally {
      await local.stop();
    }
    // A restarted agent (same name and token) takes the next run.
    const again = await spawnLocalAgents(['h0'], { gpus: { h0: 1 }, args: ['--allow-wgsl'], token: local.token });
    try {
      await expectRuns(again, 3);
    } finally {
      await again.stop();
    }
  }, 60_000);
});

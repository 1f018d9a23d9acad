import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exited, RESTART, spawnLocalAgents, type LocalAgent } from './spawn.js';
import { compileOrThrow, connect, example } from '../testing/fixtures.js';

// Local agents say how they ended when they end on their own, never when asked to stop; with
// `restart` (npm start, pipeloom run), one that ends on its own is started again on its URL.

// split-join: h0's CPU only.

describe('local agents', () => {
  it('an agent that died is reported even when its exit arrives after a stop was asked for', async () => {
    const lines: string[] = [];
    const local = await spawnLocalAgents(['h0'], { log: (host, line) => lines.push(`${host}: ${line}`) });
    // The process is gone before the stop, but its exit event comes after the stop began (as
    // when a run's failure reaches the CLI before the agent's exit does, on a loaded machine).
    local.agents[0].process.kill('SIGKILL');
    await local.stop();
    expect(lines).toContain('h0: agent exited (signal SIGKILL)');
  });

  it('an agent stopped on purpose ends without a word', async () => {
    const lines: string[] = [];
    const local = await spawnLocalAgents(['h0'], { log: (host, line) => lines.push(`${host}: ${line}`) });
    await local.stop();
    expect(lines.filter((l) => l.includes('agent exited'))).toEqual([]);
  });
});

describe('supervised local agents (restart)', () => {
  it('an agent killed with SIGKILL is restarted on the same URL and token: a coordinator logs in again and runs', async () => {
    const lines: string[] = [];
    let restarted!: (why: string) => void;
    const back = new Promise<string>((resolve) => (restarted = resolve));
    const local = await spawnLocalAgents(['h0'], {
      restart: true,
      cpuOnly: ['h0'],
      log: (host, line) => lines.push(`${host}: ${line}`),
      onRestart: (_, why) => restarted(why),
    });
    try {
      const agent: LocalAgent = local.agents[0];
      const { url } = agent;
      const first = agent.process;
      first.kill('SIGKILL');
      expect(await back).toBe('signal SIGKILL');
      expect(agent).toMatchObject({ url, restarts: 1 });
      expect(agent.process).not.toBe(first);
      expect(agent.process.exitCode).toBeNull();
      expect(lines).toContain('h0: agent exited (signal SIGKILL)');
      expect(lines).toContain(`h0: agent restarted after it exited (signal SIGKILL): listening ${url} with the same token (restart 1)`);
      await local.ready();
      const c = await connect([url], local.token);
      const r = await c.run(compileOrThrow(example('split-join'), false), { iterations: 3 }).done;
      c.close();
      expect(r.failure).toBeUndefined();
      expect(r.ok).toBe(true);
    } finally {
      await local.stop();
    }
    // Stopped on purpose: gone, and not started again.
    await exited(local.agents[0].process);
    expect(lines.filter((l) => l.includes('agent restarted'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('agent exited'))).toHaveLength(1);
  });

  it('an agent a stop signal from outside ends (Ctrl-C reaches the whole process group) is not restarted', async () => {
    const lines: string[] = [];
    const local = await spawnLocalAgents(['h0'], { restart: true, cpuOnly: ['h0'], log: (host, line) => lines.push(`${host}: ${line}`) });
    try {
      local.agents[0].process.kill('SIGINT');
      await exited(local.agents[0].process);
      // Exit code 0 once its handler has it; killed by the signal itself just after it said "listening".
      await expect(local.ready()).rejects.toThrow(/^local agent h0 was stopped by a signal from outside \((code 0|signal SIGINT)\); it is not restarted$/);
      expect(local.agents[0]).toMatchObject({ restarts: 0 });
      expect(lines.filter((l) => l.includes('agent restarted'))).toEqual([]);
    } finally {
      await local.stop();
    }
  });

  it('an agent that crashes each time it starts again is given up on, saying why and what to do', async () => {
    // Its token file goes after the first start: every restart exits at once, naming the file.
    const dir = mkdtempSync(join(tmpdir(), 'pipeloom-supervise-'));
    const file = join(dir, 'token');
    const token = 'supervised-token-0123456789';
    writeFileSync(file, token, { mode: 0o600 });
    const lines: string[] = [];
    let gaveUp!: (message: string) => void;
    const given = new Promise<string>((resolve) => (gaveUp = resolve));
    const local = await spawnLocalAgents(['h0'], {
      restart: true,
      cpuOnly: ['h0'],
      token,
      args: ['--token-file', file],
      log: (host, line) => lines.push(`${host}: ${line}`),
      onGiveUp: (_, m) => gaveUp(m),
    });
    try {
      rmSync(dir, { recursive: true });
      local.agents[0].process.kill('SIGKILL');
      const message = await given;
      expect(message).toMatch(
        new RegExp(
          `^local agent h0 crashed ${RESTART.giveUpAfter} times in a row within 10 s of starting \\(last: exited \\(1\\) before listening\\): it is not restarted again; fix the cause and start the command again`,
        ),
      );
      expect(message).toContain(`--token-file ${file}: no such file`);
      expect(lines).toContain(`h0: ${message}`);
      await expect(local.ready()).rejects.toThrow(/not restarted again/);
      expect(local.agents[0].restarts).toBe(0);
    } finally {
      await local.stop();
    }
  }, 60_000);
});

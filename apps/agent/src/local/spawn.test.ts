import { describe, expect, it } from 'vitest';
import { spawnLocalAgents } from './spawn.js';

// Local agents say how they ended when they end on their own, never when asked to stop.

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

import { describe, expect, it } from 'vitest';
import { openAgents } from './agents.js';
import { compileOrThrow, example } from '../testing/fixtures.js';

// The agents a command runs on: local ones are supervised, so a run after one was lost gets it back.

describe('local agents of a command', () => {
  it('a local agent killed mid-run fails that run naming its host; the next run in the same process gets the restarted agent', async () => {
    const ig = compileOrThrow(example('split-join'), false);
    const agents = await openAgents('run', { hosts: ['h0'], gpus: {} }, {});
    expect(agents).toBeDefined();
    try {
      const local = agents!.local!;
      const first = local.agents[0].process;
      const lost = agents!.coordinator;
      const h = lost.run(ig, { iterations: 1_000_000, onProgress: (p) => p.cycle > 3 && first.kill('SIGKILL') });
      const r = await h.done;
      expect(r.ok).toBe(false);
      expect(r.failure?.host).toBe('h0');
      const next = await agents!.renew();
      expect(next).not.toBe(lost);
      expect(local.agents[0].process).not.toBe(first);
      const again = await next.run(ig, { iterations: 3 }).done;
      expect(again.failure).toBeUndefined();
      expect(again.ok).toBe(true);
      // Nothing lost since: the same coordinator serves the run after.
      expect(await agents!.renew()).toBe(next);
    } finally {
      await agents?.close();
    }
  });
});

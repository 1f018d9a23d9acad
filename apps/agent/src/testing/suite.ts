import { afterAll, afterEach, beforeAll } from 'vitest';
import { spawnLocalAgents, type LocalAgents, type SpawnOptions } from '../local/spawn.js';

// Local agents for one test file: started before its tests, stopped after them, and after a
// failed test the agents' last 100 log lines printed (what they said is most of a diagnosis).

/** Registers the file's hooks; the returned function gives the agents once they are up. */
export function agentsForSuite(hosts: string[], options: Omit<SpawnOptions, 'log'> | (() => Omit<SpawnOptions, 'log'>) = {}): () => LocalAgents {
  let agents: LocalAgents | undefined;
  const log: string[] = [];
  beforeAll(async () => {
    const opts = typeof options === 'function' ? options() : options;
    agents = await spawnLocalAgents(hosts, { ...opts, log: (host, line) => log.push(`${host}: ${line}`) });
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') console.error(`agent log (last 100 lines):\n${log.slice(-100).join('\n')}`);
  });
  afterAll(async () => {
    await agents?.stop();
  });
  return () => {
    if (!agents) throw new Error('agentsForSuite: the agents are not started yet (use them inside a test)');
    return agents;
  };
}

import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { hasExited, spawnLocalAgents, type LocalAgents, type SpawnOptions } from '../local/spawn.js';

// Local agents shared by the tests of one file (or describe): started before its tests, stopped
// after them. After a failed test the agents' last 100 log lines are printed (what they said is
// most of a diagnosis) and the agents are replaced, as they are after a test that ended one of
// them: a test that timed out may still hold its run there, and a test never depends on what an
// earlier one left behind.

export interface SuiteAgentOptions extends Omit<SpawnOptions, 'log'> {
  /** Sees every agent log line as well (the suite keeps the last ones for a failed test). */
  log?: (host: string, line: string) => void;
}

/** Lines kept for a failed test's report. */
const KEEP = 100;

/** Registers the file's (or describe's) hooks; the returned function gives the agents once they are up. */
export function agentsForSuite(hosts: string[], options: SuiteAgentOptions | (() => SuiteAgentOptions) = {}): () => LocalAgents {
  let agents: LocalAgents | undefined;
  let log: string[] = [];
  const start = async () => {
    const { log: tell, ...opts } = typeof options === 'function' ? options() : options;
    agents = await spawnLocalAgents(hosts, {
      ...opts,
      log: (host, line) => {
        log.push(`${host}: ${line}`);
        if (log.length > 10 * KEEP) log = log.slice(-KEEP);
        tell?.(host, line);
      },
    });
  };
  beforeAll(start);
  afterEach(async (ctx) => {
    const failed = ctx.task.result?.state === 'fail';
    if (failed) console.error(`agent log (last ${KEEP} lines):\n${log.slice(-KEEP).join('\n')}`);
    if (!agents || (!failed && !agents.agents.some((a) => hasExited(a.process)))) return;
    const old = agents;
    agents = undefined;
    log = [];
    await old.stop();
  });
  // A replacement starts only when another test follows.
  beforeEach(async () => {
    if (!agents) await start();
  });
  afterAll(async () => {
    await agents?.stop();
  });
  return () => {
    if (!agents) throw new Error('agentsForSuite: the agents are not started yet (use them inside a test)');
    return agents;
  };
}

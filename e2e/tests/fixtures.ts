import { test as base } from '@playwright/test';
import { startAgents, type LocalAgents } from './agents.js';

// Every spec takes `test` and `expect` from here, so that all of them run in the same workers
// (a fixture of a worker's own makes a pool of workers of its own).

export { expect } from '@playwright/test';
/**
 * Playwright's `test` with `agents`: h0 and h1, started once per worker (each on ports the
 * system picks, with a token of the worker's own, so a page never reaches another worker's
 * agents) and stopped when the worker ends. A test that fails ends its worker, and the agents
 * with it: the next worker starts fresh ones.
 */
export const test = base.extend<object, { agents: LocalAgents }>({
  agents: [
    async ({}, use, worker) => {
      const agents = await startAgents(['h0', 'h1'], `e2e-token-worker-${worker.workerIndex}-0123456789`);
      await use(agents);
      await agents.stop();
    },
    // Two agents compiling their TypeScript through tsx on a loaded 2-core machine.
    { scope: 'worker', timeout: 120_000 },
  ],
});

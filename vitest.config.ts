import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Three kinds of test, run one kind after another (sequence.groupOrder), each with the pool and
// worker count that suit it on a 2-core machine (docs/benchmarks.md, "Test suite time"):
// - pure: core, kernels (WebGPU on the CPU adapter) and the designer's jsdom tests, in threads;
// - integration: tests that start agent processes (apps/agent, the designer's run store and Run
//   view), in forks; the agents are processes too, so more workers than cores only queue;
// - alone: tests that load the whole machine themselves (npm pack and install), one at a time.
const ALONE = ['apps/agent/src/cli/install.test.ts'];
const WEB_WITH_AGENTS = ['apps/web/src/store/run/store.test.ts', 'apps/web/src/run/RunView.test.tsx'];
// A file named here that moved would silently fall into another project: say so instead.
for (const file of [...ALONE, ...WEB_WITH_AGENTS]) if (!existsSync(file)) throw new Error(`vitest.config.ts names ${file}, which does not exist`);

export default defineConfig({
  test: {
    // A hang guard only (the tests wait for events, never for a time): generous, as other work
    // may share the 2 cores (at load 50, a 32 s WebGPU test of the pure project passed 60 s).
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // The CLI and agents the tests start, built once per run (PIPELOOM_TEST_BIN).
    globalSetup: ['./scripts/vitest-setup.mjs'],
    reporters: ['default', './scripts/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'pure',
          include: ['packages/*/src/**/*.test.ts', 'examples/kernels/**/*.test.ts', 'apps/web/src/**/*.test.{ts,tsx}'],
          exclude: WEB_WITH_AGENTS,
          pool: 'threads',
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['apps/agent/src/**/*.test.ts', ...WEB_WITH_AGENTS],
          exclude: ALONE,
          pool: 'forks',
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          pool: 'forks',
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});

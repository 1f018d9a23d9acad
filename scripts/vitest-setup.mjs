// vitest's globalSetup: builds the CLI and agents the tests start, once per test run
// (scripts/test-build.mjs), and hands the built `pipeloom` to them in PIPELOOM_TEST_BIN
// (testing/fixtures.ts, local/spawn.ts). `npm start` and users keep running the checkout.
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildForTests } from './test-build.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default async function setup() {
  // Each project inherits this setup; the first one builds for the whole run.
  if (process.env.PIPELOOM_TEST_BIN) return;
  // One folder per run: two runs in one checkout do not share (or delete) each other's build.
  const out = join(root, 'dist/test-build', String(process.pid));
  process.env.PIPELOOM_TEST_BIN = await buildForTests(out);
  return () => rmSync(out, { recursive: true, force: true });
}

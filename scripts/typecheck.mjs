#!/usr/bin/env node
// `npm run typecheck`: each package's own sources under its own platform (core with neither DOM
// nor Node types, the agent without the DOM, the designer without Node), then everything else
// (tests, benches, scripts, e2e) under the root tsconfig.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const projects = ['packages/core', 'packages/kernels', 'apps/agent', 'apps/web', '.'];
let failed = 0;
for (const p of projects) {
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, p, 'tsconfig.json'), '--noEmit'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`typecheck: ${p === '.' ? 'tests, benches and scripts (tsconfig.json)' : p} has type errors`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);

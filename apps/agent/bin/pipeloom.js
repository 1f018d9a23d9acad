#!/usr/bin/env node
// The `pipeloom` CLI. An installed package (scripts/pack.mjs) runs its built JavaScript; a
// checkout runs the TypeScript sources through tsx, with no build step.
import { existsSync } from 'node:fs';

process.env.EGL_PLATFORM ??= 'surfaceless';
const source = new URL('../src/cli/main.ts', import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import('../src/cli/main.js'));
}
process.exitCode = await main(process.argv.slice(2));

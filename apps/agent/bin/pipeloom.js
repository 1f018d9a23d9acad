#!/usr/bin/env node
// The `pipeloom` CLI. An installed package (scripts/pack.mjs) runs its built JavaScript; a
// checkout runs the TypeScript sources through tsx, with no build step.
import { existsSync } from 'node:fs';

// package.json's engines, said plainly: an older Node would fail on some later line instead.
if (Number(process.versions.node.split('.')[0]) < 20) {
  console.error(`pipeloom needs Node.js 20 or later; this is ${process.version} (docs/cli.md, "Installing")`);
  process.exit(1);
}

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

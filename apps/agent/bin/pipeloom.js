#!/usr/bin/env node
// The `pipeloom` CLI. Runs the TypeScript sources through tsx: no build step.
import { register } from 'tsx/esm/api';

process.env.EGL_PLATFORM ??= 'surfaceless';
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));

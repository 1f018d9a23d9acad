#!/usr/bin/env node
// `npm test`: installs what is missing, then typecheck, lint, unit and integration tests (vitest:
// real WebGPU on the CPU adapter, real agent processes), then the browser tests (Playwright
// with Debian's Chromium). Ends with each step's time (vitest's per project and its 15 slowest
// files come in its own output), then one line a person or CI can read: "N passed, N failed".
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.env.EGL_PLATFORM ??= 'surfaceless';

/** Each step's name and wall time in seconds, for the closing table. */
const times = [];

/**
 * Runs a step, returning exit code and output. Its output is streamed through, or with `held`
 * printed when it ends (for steps that run beside another).
 */
function step(name, cmd, args, held = false) {
  if (!held) console.log(`\n== ${name}`);
  const start = performance.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const pass = (stream) => (chunk) => {
      out += chunk;
      if (!held) stream.write(chunk);
    };
    child.stdout.on('data', pass(process.stdout));
    child.stderr.on('data', pass(process.stderr));
    child.on('close', (code) => {
      times.push([name, (performance.now() - start) / 1000]);
      if (held) process.stdout.write(`\n== ${name}\n${out}`);
      resolve({ code: code ?? 1, out });
    });
  });
}

const plain = (s) => s.replace(/\x1b\[[0-9;]*m/g, '');
let passed = 0;
let failed = 0;
const failures = [];

const setup = await step('setup', process.execPath, [join(root, 'scripts/setup.mjs')]);
if (setup.code !== 0) process.exit(setup.code);

// The CLI and agents the tests start, built once for vitest and Playwright (scripts/test-build.mjs).
const { buildForTests } = await import('./test-build.mjs');
const built = join(root, 'dist/test-build', String(process.pid));
const buildStart = performance.now();
process.env.PIPELOOM_TEST_BIN = await buildForTests(built);
times.push(['build of the CLI for the tests', (performance.now() - buildStart) / 1000]);
process.on('exit', () => rmSync(built, { recursive: true, force: true }));

// Side by side, as each is one process on one core: each package under its own platform, then
// tests and scripts (scripts/typecheck.mjs); and one formatter for the repository
// (.prettierrc.json; `npm run format` fixes what this finds).
const [typecheck, lint] = await Promise.all([
  step('typecheck', process.execPath, [join(root, 'scripts/typecheck.mjs')], true),
  step('lint (prettier --check)', process.execPath, [join(root, 'node_modules/prettier/bin/prettier.cjs'), '--check', '--log-level', 'warn', '.'], true),
]);
if (typecheck.code !== 0) failures.push('typecheck');
if (lint.code !== 0) failures.push('lint');

const unit = await step('unit and integration tests (vitest)', process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run']);
const v = /vitest: (\d+) passed, (\d+) failed/.exec(plain(unit.out));
if (v) {
  passed += Number(v[1]);
  failed += Number(v[2]);
}
if (unit.code !== 0) failures.push('vitest');

const e2e = await step('browser tests (Playwright, Debian Chromium)', process.execPath, [
  join(root, 'node_modules/@playwright/test/cli.js'),
  'test',
  '-c',
  'e2e/playwright.config.ts',
]);
const e2eOut = plain(e2e.out);
passed += Number(/(\d+) passed/.exec(e2eOut)?.[1] ?? 0);
failed += Number(/(\d+) failed/.exec(e2eOut)?.[1] ?? 0);
if (e2e.code !== 0) failures.push('e2e');

console.log(`\ntime per step:\n${times.map(([name, s]) => `  ${s.toFixed(1).padStart(7)} s  ${name}`).join('\n')}`);
if (failures.length) console.log(`\nfailed steps: ${failures.join(', ')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failures.length ? 1 : 0);

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from '../testing/fixtures.js';

// The installable CLI, as a user gets it: scripts/pack.mjs builds and packs @pipeloom/kernels,
// core and agent; the three tarballs install together into an empty prefix with npm (their
// third-party dependencies from npm's cache, else the registry; no dev dependency, no tsx); the
// installed `pipeloom` then runs --version, compile, predict, run of an example and lists a
// TypeScript kernel package's kernels, under this
// machine's Node and under every Node that scripts/setup.mjs fetched into .cache/node (the
// current LTS): the versions package.json's engines declares and docs/cli.md lists.

const tmp = mkdtempSync(join(tmpdir(), 'pipeloom-install-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const version = (JSON.parse(readFileSync(join(root, 'apps/agent/package.json'), 'utf8')) as { version: string }).version;
const otherNodes = existsSync(join(root, '.cache/node'))
  ? readdirSync(join(root, '.cache/node'))
      .map((major) => join(root, '.cache/node', major, 'bin/node'))
      .filter((n) => existsSync(n))
  : [];

describe('the packed CLI', () => {
  it(
    'npm pack + npm install into an empty prefix gives a pipeloom that runs --version, compile, predict and run of an example on each supported Node',
    { timeout: 600_000 },
    () => {
      expect(otherNodes.length, 'no Node but this one to test under: run node scripts/setup.mjs (it fetches the current LTS into .cache/node)').toBeGreaterThan(
        0,
      );
      const tarballs = execFileSync(process.execPath, [join(root, 'scripts/pack.mjs'), '--out', join(tmp, 'tarballs')], { cwd: root, encoding: 'utf8' })
        .trim()
        .split('\n');
      expect(tarballs.map((t) => t.slice(t.lastIndexOf('/') + 1))).toEqual([
        `pipeloom-kernels-${version}.tgz`,
        `pipeloom-core-${version}.tgz`,
        `pipeloom-agent-${version}.tgz`,
      ]);

      const prefix = join(tmp, 'prefix');
      // Nothing of this repository reachable: a prefix outside it, and none of the variables
      // through which a parent (npm run, vitest) passes paths or loaders. The rest stays: npm
      // needs the machine's certificates and proxy settings to reach its registry.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|NODE_OPTIONS$|NODE_PATH$|INIT_CWD$|VITEST)/i.test(k)));
      env.EGL_PLATFORM = 'surfaceless';
      const install = spawnSync(
        'npm',
        ['install', '--prefix', prefix, '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', ...tarballs],
        { cwd: tmp, encoding: 'utf8', env, timeout: 300_000 },
      );
      expect(install.status, install.stderr).toBe(0);
      const installed = readdirSync(join(prefix, 'node_modules'));
      for (const dev of ['tsx', 'typescript', 'vitest']) expect(installed).not.toContain(dev);
      expect(existsSync(join(prefix, 'node_modules/@pipeloom/agent/src/cli/main.js'))).toBe(true);
      expect(existsSync(join(prefix, 'node_modules/@pipeloom/agent/src/cli/main.ts'))).toBe(false);

      const work = join(tmp, 'work');
      execFileSync('mkdir', ['-p', work]);
      copyFileSync(join(root, 'examples/piic.json'), join(work, 'piic.json'));
      // A kernel package in TypeScript with no node_modules of its own, as an author writes one.
      cpSync(join(root, 'examples/kernels/image'), join(work, 'image'), { recursive: true, filter: (f) => !f.endsWith('.test.ts') });
      const bin = join(prefix, 'node_modules/.bin/pipeloom');
      const cli = join(prefix, 'node_modules/@pipeloom/agent/bin/pipeloom.js');
      // This machine's Node through the installed bin (its #! line); the others by path.
      const runs: { node: string; cmd: string; pre: string[] }[] = [
        { node: process.version, cmd: bin, pre: [] },
        ...otherNodes.map((n) => ({ node: execFileSync(n, ['--version'], { encoding: 'utf8' }).trim(), cmd: n, pre: [cli] })),
      ];
      for (const { node, cmd, pre } of runs) {
        const pipeloom = (...args: string[]) => spawnSync(cmd, [...pre, ...args], { cwd: work, encoding: 'utf8', env, timeout: 180_000 });
        const v = pipeloom('--version');
        expect(v.stdout, `${node}: ${v.stderr}`).toBe(`pipeloom ${version}\n`);
        const compiled = pipeloom('compile', 'piic.json', '--format', 'json');
        expect(compiled.status, `${node} compile: ${compiled.stderr}`).toBe(0);
        expect(JSON.parse(compiled.stdout).schedule).toEqual({ P: 0, I1: 1, I2: 2, C: 3 });
        const predicted = pipeloom('predict', 'piic.json', '--format', 'json');
        expect(predicted.status, `${node} predict: ${predicted.stderr}`).toBe(0);
        expect(JSON.parse(predicted.stdout).overlap.cycleTime).toBeGreaterThan(0);
        const listed = pipeloom('kernels', '--kernels', './image');
        expect(listed.status, `${node} kernels: ${listed.stderr}`).toBe(0);
        expect(listed.stdout).toContain('image.read 1.0.0');
        // Local agents too run from the installed package, on the same Node.
        const ran = pipeloom('run', 'piic.json', '--iterations', '3', '--format', 'json');
        expect(ran.status, `${node} run: ${ran.stderr}`).toBe(0);
        expect(JSON.parse(ran.stdout)).toMatchObject({ ok: true, iterations: 3 });
        expect(`${v.stderr}${compiled.stderr}${predicted.stderr}${ran.stderr}`, node).not.toMatch(/DeprecationWarning|ExperimentalWarning/);
      }
    },
  );
});

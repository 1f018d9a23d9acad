#!/usr/bin/env node
// `npm run pack [-- --out DIR]`: builds the publishable packages (@pipeloom/kernels,
// @pipeloom/core, @pipeloom/agent with the `pipeloom` CLI) to JavaScript with the project's
// own tsc and packs each with `npm pack` into DIR (default dist/packages). Prints one tarball
// path a line, in install order. The tarballs install together on a machine with nothing but
// Node and npm (docs/cli.md, "Installing"):
//   npm install --prefix /opt/pipeloom $(node scripts/pack.mjs)
// Each package is laid out as its source tree with .js for .ts, so every path the code makes
// from import.meta.url (the agent's package.json, bin/, the PE thread's boot file) holds in both.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(values.out ?? join(root, 'dist/packages'));
const PACKAGES = ['packages/kernels', 'packages/core', 'apps/agent'];
// Development-only dependencies the sources' manifests carry for a checkout (tsx runs the
// TypeScript there); a built package never needs them.
const DEV_ONLY = new Set(['tsx']);

// This run's own build and staging folders: two packs at once (two test runs side by side)
// never meet; removed at the end.
mkdirSync(join(root, 'dist'), { recursive: true });
const work = mkdtempSync(join(root, 'dist/pack-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
const build = join(work, 'build');
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', build], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
});

const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** `./src/x.ts` -> the built file and its types; `./src/*.ts` patterns the same way. */
function builtExport(target) {
  if (typeof target !== 'string' || !target.endsWith('.ts')) return target;
  const base = target.slice(0, -'.ts'.length);
  return { types: `${base}.d.ts`, default: `${base}.js` };
}

/** The manifest of the built package: no private flag, no dev-only parts, exports to the built files. */
function manifest(source) {
  const m = { ...source };
  delete m.private;
  delete m.devDependencies;
  delete m.scripts;
  m.engines = rootManifest.engines;
  if (m.exports) {
    // Test helpers are not built (packages' testing/ folders serve this repository's tests):
    // an entry there (core's /testing and /internal) is no part of the published package.
    m.exports = Object.fromEntries(
      Object.entries(m.exports)
        .filter(([, v]) => !(typeof v === 'string' && v.includes('/testing/')))
        .map(([k, v]) => [k, builtExport(v)]),
    );
  }
  if (m.dependencies) m.dependencies = Object.fromEntries(Object.entries(m.dependencies).filter(([k]) => !DEV_ONLY.has(k)));
  return m;
}

/** Files the built code reads beside itself: .mjs and .json, but not tests' own. */
function copyAssets(from, to) {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const src = join(from, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'testing' && entry.name !== '__snapshots__') copyAssets(src, join(to, entry.name));
    } else if (/\.(mjs|json)$/.test(entry.name) && !entry.name.includes('.test')) {
      mkdirSync(to, { recursive: true });
      cpSync(src, join(to, entry.name));
    }
  }
}

mkdirSync(out, { recursive: true });
const tarballs = [];
for (const dir of PACKAGES) {
  const stage = join(work, 'stage', dir);
  mkdirSync(stage, { recursive: true });
  cpSync(join(build, dir, 'src'), join(stage, 'src'), { recursive: true });
  copyAssets(join(root, dir, 'src'), join(stage, 'src'));
  if (existsSync(join(root, dir, 'bin'))) cpSync(join(root, dir, 'bin'), join(stage, 'bin'), { recursive: true });
  for (const f of ['LICENSE', 'NOTICE']) cpSync(join(root, f), join(stage, f));
  cpSync(join(root, dir, 'README.md'), join(stage, 'README.md'));
  const source = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest(source), null, 2)}\n`);
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }),
  );
  tarballs.push(join(out, packed[0].filename));
}
console.log(tarballs.join('\n'));

// The CLI and agents the tests start, built once per test run (vitest's globalSetup): every
// process then loads JavaScript instead of compiling the TypeScript sources through tsx at each
// start. esbuild transpiles file by file (the sources are isolatedModules), into the source
// tree's layout, so every path the code makes from import.meta.url (the agent's package.json,
// bin/, the PE threads' boot file) holds as in a checkout and in scripts/pack.mjs's packages.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = ['packages/kernels', 'packages/core', 'apps/agent'];

/** Every file under `dir`, tests and snapshots left out. */
function files(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !/\.test\.tsx?$/.test(e.name) && !e.parentPath.includes('__snapshots__'))
    .map((e) => join(e.parentPath, e.name));
}

/** `./src/x.ts` -> `./src/x.js`, in a manifest's exports. */
const built = (exports) => Object.fromEntries(Object.entries(exports).map(([k, v]) => [k, v.replace(/\.ts$/, '.js')]));

/** Builds into `out` (emptied first); returns the path of the built `pipeloom` bin. */
export async function buildForTests(out) {
  rmSync(out, { recursive: true, force: true });
  const sources = [];
  for (const dir of PACKAGES) {
    for (const file of files(join(root, dir, 'src'))) {
      if (file.endsWith('.ts')) sources.push(file);
      // Files the code reads beside itself (the PE threads' .mjs boot file, JSON, test data).
      else {
        mkdirSync(dirname(join(out, relative(root, file))), { recursive: true });
        cpSync(file, join(out, relative(root, file)));
      }
    }
    const manifest = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
    manifest.exports = built(manifest.exports);
    mkdirSync(join(out, dir), { recursive: true });
    writeFileSync(join(out, dir, 'package.json'), JSON.stringify(manifest, null, 2));
    // The built packages import each other by name: resolved here before the checkout's.
    mkdirSync(join(out, 'node_modules', dirname(manifest.name)), { recursive: true });
    symlinkSync(relative(join(out, 'node_modules', dirname(manifest.name)), join(out, dir)), join(out, 'node_modules', manifest.name));
  }
  cpSync(join(root, 'apps/agent/bin'), join(out, 'apps/agent/bin'), { recursive: true });
  await build({ entryPoints: sources, outdir: out, outbase: root, format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  return join(out, 'apps/agent/bin/pipeloom.js');
}

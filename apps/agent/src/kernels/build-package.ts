import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Loader, type Message, type Plugin } from 'esbuild';

// A kernel package, built to one JavaScript module that every thread of this process imports
// (the package thread, the main thread, each PE thread). Its own files are bundled, TypeScript
// included (an installed pipeloom has no TypeScript loader, and a thread that registers one pays
// for it at each start); `@pipeloom/kernels` and `@pipeloom/core` are this process's own copies
// (one registry, one defineKernel, wherever the package lives and whatever it installed); any
// other import stays the package's, resolved from the file that imports it. `import.meta.url`
// keeps naming each source file, so a package that reads a file beside its code still finds it.

const OWN = /^@pipeloom\/(kernels|core)(\/.*)?$/;
const LOADERS: Record<string, Loader> = { '.ts': 'ts', '.mts': 'ts', '.cts': 'ts', '.tsx': 'tsx', '.js': 'js', '.mjs': 'js', '.cjs': 'js', '.jsx': 'jsx' };
/** Marks the resolve this plugin asks esbuild for itself, so it is not asked again. */
const INNER = Symbol('inner');

let outDir: string | undefined;
/** This process's own folder for built packages, removed when it exits. */
function out(): string {
  if (!outDir) {
    const dir = mkdtempSync(join(tmpdir(), 'pipeloom-kernels-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    outDir = dir;
  }
  return outDir;
}

const plugin = (): Plugin => ({
  name: 'pipeloom-kernel-package',
  setup(b) {
    b.onResolve({ filter: OWN }, (a) => ({ path: import.meta.resolve(a.path), external: true }));
    // Bare imports other than ours: the package's dependencies, imported where they are installed.
    b.onResolve({ filter: /^[^./]/ }, async (a) => {
      if (a.pluginData === INNER || a.path.startsWith('node:') || builtinModules.includes(a.path.split('/')[0])) return undefined;
      const r = await b.resolve(a.path, { kind: a.kind, resolveDir: a.resolveDir, importer: a.importer, pluginData: INNER });
      if (r.errors.length) return { errors: r.errors };
      return { path: pathToFileURL(r.path).href, external: true };
    });
    b.onLoad({ filter: /\.[cm]?[jt]sx?$/ }, (a) => {
      const url = JSON.stringify(pathToFileURL(a.path).href);
      const contents = readFileSync(a.path, 'utf8')
        .replaceAll('import.meta.url', url)
        .replaceAll('import.meta.filename', JSON.stringify(a.path))
        .replaceAll('import.meta.dirname', JSON.stringify(join(a.path, '..')));
      return { contents, loader: LOADERS[a.path.slice(a.path.lastIndexOf('.'))] ?? 'js' };
    });
  },
});

/** An esbuild message as a user reads it: file:line:column (from the working folder when inside it), then the text. */
function where(m: Message, cwd: string): string {
  const l = m.location;
  if (!l) return m.text;
  const file = resolve(cwd, l.file);
  const shown = relative(cwd, file);
  return `${shown.startsWith('..') || isAbsolute(shown) ? file : shown}:${l.line}:${l.column + 1}: ${m.text}`;
}

/**
 * Builds the package whose entry is `file` into this process's folder; gives the built module's
 * path, or the first problem esbuild found, worded against the package's own files.
 */
export async function buildKernelPackage(file: string, cwd = process.cwd()): Promise<{ module: string } | { problem: string }> {
  let text: string;
  try {
    const r = await build({
      entryPoints: [file],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // Stacks from a package's code name its own files and lines.
      sourcemap: 'inline',
      logLevel: 'silent',
      plugins: [plugin()],
    });
    text = r.outputFiles[0].text;
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors;
    const first = errors?.[0];
    const more = errors && errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
    return { problem: first ? `${where(first, cwd)}${more}` : String(e) };
  }
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const module = join(out(), `${basename(file).replace(/\.[^.]+$/, '')}-${hash}.mjs`);
  if (!existsSync(module)) writeFileSync(module, text, { mode: 0o600 });
  return { module };
}

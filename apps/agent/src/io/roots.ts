import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';

// The directories an agent serves data from (`--data [name=]DIR`, named by its operator) and
// the one way a document's `root:relative/path` becomes a file: nothing outside a root is
// ever read or written, whatever the path says (.., absolute, symlinks out).

export interface DataRoot {
  name: string;
  /** The directory's real path (symlinks resolved once, at start). */
  dir: string;
  /** Served with --data-ro: io.write refuses it. */
  readOnly?: boolean;
}

/** Most roots one agent serves, and the longest name and directory a flag may give. */
export const MAX_DATA_ROOTS = 32;
export const MAX_ROOT_NAME = 64;
export const MAX_ROOT_DIR = 4096;
/** Longest relative path a document may name (the kernels' MAX_IO_PATH bounds the whole param). */
const MAX_RELATIVE = 1024;

/** How PE threads learn the roots (as KERNELS_ENV tells them the kernel packages): JSON DataRoot[]. */
export const DATA_ENV = 'PIPELOOM_DATA_ROOTS';
/** The most bytes one sink may write in one run (--data-quota), for PE threads. */
export const DATA_QUOTA_ENV = 'PIPELOOM_DATA_QUOTA';

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** `--data` flags as given -> roots, or the message naming the flag and the fix. */
export function parseDataFlags(flags: readonly string[], cwd = process.cwd(), readOnly: readonly string[] = []): { roots: DataRoot[] } | { error: string } {
  const all = [...flags.map((f) => ({ f, ro: false })), ...readOnly.map((f) => ({ f, ro: true }))];
  if (all.length > MAX_DATA_ROOTS) return { error: `--data: ${all.length} roots, more than ${MAX_DATA_ROOTS}` };
  const roots: DataRoot[] = [];
  for (const { f: flag, ro } of all) {
    if (flag.length > MAX_ROOT_NAME + 1 + MAX_ROOT_DIR)
      return { error: `--data: a flag of ${flag.length} characters, more than ${MAX_ROOT_NAME + 1 + MAX_ROOT_DIR}` };
    const eq = flag.indexOf('=');
    const given = eq > 0 && NAME.test(flag.slice(0, eq)) ? flag.slice(0, eq) : undefined;
    const dirText = given === undefined ? flag : flag.slice(eq + 1);
    if (!dirText) return { error: `--data ${flag}: no directory; give --data NAME=DIR` };
    const dir = resolve(cwd, dirText);
    const name = given ?? basename(dir);
    if (!NAME.test(name) || name.length > MAX_ROOT_NAME)
      return {
        error: `--data ${flag}: "${name.slice(0, MAX_ROOT_NAME)}" is not a root name (a letter, then letters, digits, - or _; at most ${MAX_ROOT_NAME}); give --data NAME=DIR`,
      };
    if (roots.some((r) => r.name === name)) return { error: `--data ${flag}: two roots are named "${name}"; give each its own NAME=` };
    let real: string;
    try {
      real = realpathSync(dir);
      if (!statSync(real).isDirectory()) return { error: `--data ${flag}: ${dir} is not a directory; name a directory` };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return {
        error: `--data ${flag}: ${dir}: ${code === 'ENOENT' ? 'no such directory' : code === 'EACCES' ? 'not readable by this user' : (code ?? String(e))}; create it or name another`,
      };
    }
    roots.push({ name, dir: real, ...(ro ? { readOnly: true } : {}) });
  }
  return { roots };
}

/** A path the document wrote that cannot be used: what is wrong, and the fix. */
export class DataPathError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'DataPathError';
  }
}

const served = (roots: readonly DataRoot[]) =>
  roots.length ? `this agent serves ${roots.map((r) => `"${r.name}"`).join(', ')}` : 'this agent serves no data (pipeloom agent --data NAME=DIR)';

/** Is `file` (a real path) inside `dir` (a real path)? */
export const inside = (dir: string, file: string) => file === dir || file.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * `root:relative/path` -> the root and the file's absolute path (not yet checked against
 * symlinks: `realFile` does that where the file exists). Throws a DataPathError for an unknown
 * root, an absolute path, a `..`, an empty or overlong path.
 */
export function splitDataPath(roots: readonly DataRoot[], written: string): { root: DataRoot; relative: string; file: string } {
  const colon = written.indexOf(':');
  if (colon < 1) throw new DataPathError(`"${written.slice(0, 80)}" names no data root`, `write root:relative/path; ${served(roots)}`);
  const name = written.slice(0, colon);
  const relative = written.slice(colon + 1);
  const root = roots.find((r) => r.name === name);
  if (!root) throw new DataPathError(`data root "${name.slice(0, MAX_ROOT_NAME)}" is unknown to this agent`, served(roots));
  if (!relative) throw new DataPathError(`"${written.slice(0, 80)}" names no file in root "${name}"`, 'write root:relative/path');
  if (relative.length > MAX_RELATIVE) throw new DataPathError(`a path of ${relative.length} characters, more than ${MAX_RELATIVE}`, 'name a shorter path');
  if (relative.includes('\0')) throw new DataPathError(`"${name}:..." holds a NUL character`, 'name a file inside the root');
  if (isAbsolute(relative) || relative.startsWith('/') || relative.startsWith('\\') || /^[A-Za-z]:/.test(relative))
    throw new DataPathError(`"${written.slice(0, 80)}" is an absolute path`, `name a file relative to root "${name}"`);
  if (relative.split(/[/\\]/).includes('..'))
    throw new DataPathError(`"${written.slice(0, 80)}" leaves root "${name}" (..)`, `name a file inside root "${name}"`);
  const file = resolve(root.dir, relative);
  // resolve() of a path without .. and not absolute stays below the root; checked all the same.
  if (!inside(root.dir, file) || file === root.dir)
    throw new DataPathError(`"${written.slice(0, 80)}" leaves root "${name}"`, `name a file inside root "${name}"`);
  return { root, relative, file };
}

/** The real path of an existing `file` inside `root`; throws a DataPathError when a symlink takes it out. ENOENT and other errors pass through. */
export function realFile(root: DataRoot, written: string, file: string): string {
  const real = realpathSync(file);
  if (!inside(root.dir, real))
    throw new DataPathError(
      `"${written.slice(0, 80)}" leaves root "${root.name}" (a symbolic link points outside it)`,
      `name a file inside root "${root.name}"`,
    );
  return real;
}

/**
 * Where a write of `file` may go: its directory's real path, inside the root (the nearest
 * existing ancestor checked, so a symlinked directory cannot take a write out). The caller
 * creates what does not exist yet (mkdir -p).
 */
export function writeDir(root: DataRoot, written: string, file: string): string {
  let dir = dirname(file);
  const names: string[] = [];
  for (;;) {
    let real: string;
    try {
      real = realpathSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || dir === root.dir) throw e;
      names.unshift(basename(dir));
      dir = dirname(dir);
      continue;
    }
    if (!inside(root.dir, real))
      throw new DataPathError(
        `"${written.slice(0, 80)}" leaves root "${root.name}" (a symbolic link points outside it)`,
        `name a file inside root "${root.name}"`,
      );
    if (!statSync(real).isDirectory()) throw new DataPathError(`"${written.slice(0, 80)}": ${dir} is not a directory`, 'name a file in a directory');
    return resolve(real, ...names);
  }
}

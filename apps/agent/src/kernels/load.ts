import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  checkKernelSpec,
  findKernel,
  formatKernelProblem,
  getKernel,
  KernelDefinitionError,
  registerKernels,
  withDefaults,
  type Kernel,
  type Params,
} from '@pipeloom/kernels';
import { DEFAULT_KERNEL_LOAD_TIMEOUT_S, guardKernel, PackageHost } from './package-host.js';
import type { LoadedPackages, PackageFile } from './package-calls.js';
import { buildKernelPackage } from './build-package.js';

// Kernel packages (`--kernels PATH_OR_PACKAGE`): ES modules on this machine's disk, named by
// its operator, never by a document. Each exports kernels made with defineKernel (named
// exports, or a default export that is one kernel or a list), in TypeScript or JavaScript, built
// to one module first (build-package.ts). Loading registers them in this process's registry;
// PE threads load the same list again (runtime/pe-worker-boot.mjs reads KERNELS_ENV), since a
// worker has its own module instances.

/** The environment variable through which PE threads learn the resolved package files. */
export const KERNELS_ENV = 'PIPELOOM_KERNEL_PACKAGES';

/** Which file a `--kernels` value names: a path (file or folder with package.json / index) or an installed package. */
function resolvePackage(name: string, cwd: string): { file?: string; problem?: string } {
  const looksLikePath = name.startsWith('.') || isAbsolute(name) || name.includes('\\') || existsSync(resolve(cwd, name));
  if (looksLikePath) {
    const path = resolve(cwd, name);
    if (!existsSync(path)) return { problem: `no such file or folder` };
    if (statSync(path).isDirectory()) {
      try {
        // A folder is a package: its package.json's main, or index.ts / index.js. Resolved as a
        // folder ('./' from inside it), never as `path` plus an extension (a sibling `path.json`).
        return { file: createRequire(join(path, 'package.json')).resolve('./') };
      } catch {
        for (const index of ['index.ts', 'index.js', 'index.mjs']) if (existsSync(resolve(path, index))) return { file: resolve(path, index) };
        return { problem: 'is a folder with no package.json main or exports and no index.ts / index.js' };
      }
    }
    return { file: path };
  }
  try {
    return { file: createRequire(`${cwd}/`).resolve(name) };
  } catch (e) {
    return {
      problem: `is not a file and not an installed package (${(e as Error).message.split('\n')[0]}); install it (npm install ${name}) or give its path`,
    };
  }
}

/** Kernels among a module's exports: objects with an id and a CPU twin or GPU side, in export order. */
function exportedKernels(mod: Record<string, unknown>): unknown[] {
  const out: unknown[] = [];
  const take = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(take);
    else if (v && typeof v === 'object' && typeof (v as { id?: unknown }).id === 'string' && ('cpu' in v || 'gpu' in v) && !out.includes(v)) out.push(v);
  };
  // The default export first: its order is the author's (a namespace's keys are sorted).
  take(mod.default);
  for (const [key, v] of Object.entries(mod)) if (key !== 'default') take(v);
  return out;
}

/** What the package thread is doing while it imports and checks (kernels/package-host.ts names it when it overruns). */
export type LoadStep = { package: string; doing: 'importing' } | { package: string; doing: 'checking'; kernel: string } | undefined;

/**
 * Resolves each name to its file and builds it (kernels/build-package.ts); a name that resolves
 * to none, or a package that does not build, is a problem.
 */
async function resolveAll(names: readonly (string | PackageFile)[], cwd: string, problems: string[]): Promise<PackageFile[]> {
  const out: PackageFile[] = [];
  for (const n of names) {
    if (typeof n !== 'string') {
      out.push(n);
      continue;
    }
    const { file, problem } = resolvePackage(n, cwd);
    if (!file) {
      problems.push(`kernel package ${n}: ${problem}`);
      continue;
    }
    const built = await buildKernelPackage(file, cwd);
    if ('module' in built) out.push({ name: n, file, module: built.module });
    else problems.push(`kernel package ${n} (${file}) failed to load: ${built.problem}`);
  }
  return out;
}

/**
 * Imports and registers each package in this thread, in order (PE threads, the package thread).
 * A package that fails to import, exports no kernel, exports a bad definition or an id already
 * registered is reported (never a stack), and its kernels are not registered. `step` hears
 * what is being done (a package's top level runs its own code); `wrap` makes what is registered.
 */
export async function importKernelPackages(
  names: readonly (string | PackageFile)[],
  cwd = process.cwd(),
  step: (s: LoadStep) => void = () => {},
  wrap: (k: Kernel) => Kernel = (k) => k,
): Promise<LoadedPackages> {
  const loaded: LoadedPackages = { packages: [], problems: [] };
  for (const { name, file, module } of await resolveAll(names, cwd, loaded.problems)) {
    let mod: Record<string, unknown>;
    try {
      step({ package: name, doing: 'importing' });
      mod = (await import(pathToFileURL(module ?? file).href)) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof KernelDefinitionError) {
        for (const p of e.problems) loaded.problems.push(`kernel package ${name}: ${formatKernelProblem(p)}`);
      } else {
        const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
        loaded.problems.push(`kernel package ${name} (${file}) failed to load: ${message}`);
      }
      continue;
    } finally {
      step(undefined);
    }
    const kernels = exportedKernels(mod) as Kernel[];
    if (!kernels.length) {
      loaded.problems.push(`kernel package ${name} (${file}) exports no kernel (export kernels made with defineKernel from @pipeloom/kernels)`);
      continue;
    }
    // Kernels not made with defineKernel get the same checks here.
    const bad = kernels.flatMap((k) => {
      step({ package: name, doing: 'checking', kernel: String((k as { id?: unknown }).id) });
      try {
        return checkKernelSpec(k);
      } finally {
        step(undefined);
      }
    });
    if (bad.length) {
      for (const p of bad) loaded.problems.push(`kernel package ${name}: ${formatKernelProblem(p)}`);
      continue;
    }
    const duplicate = registerKernels(kernels.map(wrap), name);
    for (const p of duplicate) loaded.problems.push(`kernel package ${name}: ${formatKernelProblem(p)}`);
    loaded.packages.push({ name, file, module, kernels: kernels.filter((k) => !duplicate.some((p) => p.kernel === k.id)).map((k) => k.id) });
  }
  return loaded;
}

/** The package threads of this process (one per load), for `prefetchKernelCalls` and `packageOverrun`. */
const hosts: PackageHost[] = [];

/**
 * Loads the packages for this process's main thread: each is imported and checked first on a
 * thread of its own under `loadTimeoutMs` (a package whose top level loops or never settles is
 * a problem naming it, not a hang), then here, its kernels registered with their spec functions
 * answered by that thread (kernels/package-host.ts). `restart`: an agent, whose thread starts
 * again after a call overruns.
 */
export async function loadKernelPackages(
  names: readonly string[],
  cwd = process.cwd(),
  opts: { loadTimeoutMs?: number; restart?: boolean } = {},
): Promise<LoadedPackages> {
  const problems: string[] = [];
  const list = await resolveAll(names, cwd, problems);
  if (!list.length) return { packages: [], problems };
  const host = new PackageHost(opts.loadTimeoutMs ?? DEFAULT_KERNEL_LOAD_TIMEOUT_S * 1000, opts.restart ?? false);
  const vetted = await host.load(list);
  problems.push(...vetted.problems);
  if (!vetted.packages.length) {
    host.close();
    return { packages: [], problems };
  }
  hosts.push(host);
  // The same files here: their top level has just finished on the thread.
  const ok = list.filter((p) => vetted.packages.some((q) => q.file === p.file));
  const here = await importKernelPackages(ok, cwd, undefined, (k) => guardKernel(k, host));
  for (const p of here.problems) if (!problems.includes(p)) problems.push(p);
  return { packages: here.packages, problems };
}

/** At most this many (kernel, params) pairs of one message are evaluated ahead; checks call the rest one by one. */
const MAX_PREFETCH = 65_536;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A package kernel and params as a deploy names them (the message as it came: anything may be missing), or undefined. */
function packageItem(kernel: unknown, params: unknown): { kernel: string; params: Record<string, unknown> } | undefined {
  const k = typeof kernel === 'string' ? findKernel(kernel) : undefined;
  if (!k || !hosts.some((h) => h.kernels.has(k.id))) return undefined;
  return { kernel: k.id, params: withDefaults(k, isObj(params) ? (params as Params) : {}) };
}

/** The package kernels a deploy's checks call at their params: the source kernels of its initial tokens (runtime/initial.ts). */
export function deployKernelCalls(m: unknown): { kernel: string; params: Record<string, unknown> }[] {
  const out: { kernel: string; params: Record<string, unknown> }[] = [];
  if (!hosts.length || !isObj(m) || !Array.isArray(m.programs)) return out;
  for (const program of m.programs.slice(0, MAX_PREFETCH)) {
    const initial = isObj(program) && Array.isArray(program.initial) ? program.initial : [];
    for (const f of initial.slice(0, MAX_PREFETCH - out.length)) {
      const item = isObj(f) ? packageItem(f.kernel, f.params) : undefined;
      if (item) out.push(item);
    }
  }
  return out;
}

/** The package kernels a bag-deploy's checks and its tasks' checks call: each node's kernel at its params (taskbag/check.ts). */
export function bagKernelCalls(m: unknown): { kernel: string; params: Record<string, unknown> }[] {
  const out: { kernel: string; params: Record<string, unknown> }[] = [];
  if (!hosts.length || !isObj(m) || !Array.isArray(m.nodes)) return out;
  for (const node of m.nodes.slice(0, MAX_PREFETCH)) {
    const item = isObj(node) ? packageItem(node.kernel, node.params) : undefined;
    if (item) out.push(item);
  }
  return out;
}

/** Evaluates off the main thread what checks will read of these package kernels at these params (an agent's deploy); rejects with an overrun's message. */
export async function prefetchKernelCalls(items: { kernel: string; params: Record<string, unknown> }[]): Promise<void> {
  for (const h of hosts) await h.prefetch(items);
}

/** `--kernel-load-timeout S` in milliseconds: the default when absent, undefined (after a message) when it is not a number of seconds above 0. */
export function loadTimeoutFlag(command: string, raw: string | boolean | undefined): number | undefined {
  if (raw === undefined) return DEFAULT_KERNEL_LOAD_TIMEOUT_S * 1000;
  const s = Number(raw);
  if (typeof raw === 'string' && raw.trim() !== '' && s > 0 && s <= 86_400) return s * 1000;
  console.error(`pipeloom ${command}: --kernel-load-timeout must be a number of seconds above 0 (at most 86400), not "${String(raw)}"`);
  return undefined;
}

/** Why package calls fail in this process (a call overran on a CLI command), or undefined. */
export function packageOverrun(): string | undefined {
  return hosts.find((h) => h.overrun)?.overrun;
}

/**
 * Runs a command's work that calls package kernels' functions (core's compile, predict): when
 * one overran, prints its message and gives undefined (the command exits 2), whatever the work
 * made of the failed call.
 */
export function withPackageCalls<T>(command: string, work: () => T): T | undefined {
  let out: T;
  try {
    out = work();
  } catch (e) {
    if (!packageOverrun()) throw e;
  }
  const overrun = packageOverrun();
  if (overrun) {
    console.error(`pipeloom ${command}: ${overrun}`);
    return undefined;
  }
  return out!;
}

/**
 * `--kernels` of a command: loads the packages, prints each problem on stderr; false when any
 * (the command exits 2). Sets KERNELS_ENV so this process's PE threads load the same files.
 */
export async function loadKernelsFlag(command: string, names: readonly string[] | undefined, loadTimeoutMs?: number): Promise<boolean> {
  if (!names?.length) return true;
  const loaded = await loadKernelPackages(names, process.cwd(), { loadTimeoutMs });
  for (const p of loaded.problems) console.error(`pipeloom ${command}: ${p}`);
  shareWithThreads(loaded);
  return loaded.problems.length === 0;
}

/** Tells this process's PE threads which files to load (runtime/pe-worker-boot.mjs): the ones loaded here, built ones as built. */
export function shareWithThreads(loaded: LoadedPackages): void {
  process.env[KERNELS_ENV] = JSON.stringify(loaded.packages.map(({ name, file, module }) => ({ name, file, module })));
}

/**
 * Compiles the WGSL of every package kernel registered from `packages` on `device` at its
 * default params: a module that does not compile is a problem naming the package, the kernel
 * and the line (found when the agent starts, not at a user's first run).
 */
export async function compileCheck(packages: LoadedPackages['packages'], device: GPUDevice): Promise<string[]> {
  const problems: string[] = [];
  for (const p of packages) {
    for (const id of p.kernels) {
      const k = getKernel(id);
      if (!k.gpu) continue;
      try {
        (await k.gpu.prepare(device, withDefaults(k, {}))).destroy();
      } catch (e) {
        problems.push(`kernel package ${p.name}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
  return problems;
}

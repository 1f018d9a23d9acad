import type { KernelSpec, Params } from '@pipeloom/kernels';

// What the main thread and the package thread (package-worker.ts) say to each other: a call of
// one of a package kernel's functions, its memo key, and what the package thread is doing now
// (in shared memory, readable while that thread is stuck in a package's loop).

/** A kernel package as named (`--kernels`), the file it resolved to, and the module built from it that threads import (kernels/build-package.ts). */
export interface PackageFile {
  name: string;
  file: string;
  module?: string;
}

/** What loading packages gave (kernels/load.ts importKernelPackages, in whichever thread imported them). */
export interface LoadedPackages {
  /** Each package as named, the file it resolved to, and its kernels. */
  packages: (PackageFile & { kernels: string[] })[];
  /** One line each: the package, what went wrong, the fix. Empty when every package loaded. */
  problems: string[];
}

/** One call of a package kernel's function: `fn` is its place in the definition (`outputs.out.type`, `cost`, `ports`...). */
export interface PackageCall {
  kernel: string;
  fn: string;
  args: unknown[];
}

/** What a call gave: its value (plain data), or the message of what it threw. */
export type CallResult = { ok: unknown } | { error: string };

/** JSON with object keys sorted: one key for equal params whatever their order. */
export function stableJson(v: unknown): string {
  if (v === undefined) return 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
    .join(',')}}`;
}

export const callKey = (c: PackageCall) => `${c.kernel}\u0000${c.fn}\u0000${stableJson(c.args)}`;

/** Ports a prefetch evaluates for a repeated port at most (more are called one by one). */
const MAX_PREFETCH_COPIES = 256;

/**
 * Every call of `k`'s functions that depends on the params alone, at `params`: what an agent's
 * checks of a deploy read (declared ports, each port's type and rate, the cost), so that they
 * can be evaluated off the main thread before the checks run.
 */
export function describeCalls(k: KernelSpec, params: Params): PackageCall[] {
  const calls: PackageCall[] = [];
  const id = k.id;
  if (k.ports) calls.push({ kernel: id, fn: 'ports', args: [params] });
  else {
    for (const side of ['inputs', 'outputs'] as const) {
      for (const p of k[side]) {
        if (p.repeat) {
          const n = Number(params[p.repeat] ?? k.params[p.repeat]?.default);
          const count = Number.isInteger(n) && n >= 0 ? Math.min(n, MAX_PREFETCH_COPIES) : 0;
          for (let i = 0; i < count; i++) calls.push({ kernel: id, fn: `${side}.${p.name}.type`, args: [params, i] });
        } else calls.push({ kernel: id, fn: `${side}.${p.name}.type`, args: [params, null] });
        if (typeof p.rate === 'function') calls.push({ kernel: id, fn: `${side}.${p.name}.rate`, args: [params] });
      }
    }
  }
  if (typeof k.cost === 'function') calls.push({ kernel: id, fn: 'cost', args: [params] });
  return calls;
}

export interface DoingWhat {
  kernel?: string;
  fn?: string;
  params?: string;
  package?: string;
  doing?: string;
}

/** What the package thread is doing: since when (ms since the epoch, 0: nothing) and what, as JSON. */
export class Doing {
  private readonly since: Float64Array;
  private readonly length: Int32Array;
  private readonly text: Uint8Array;

  constructor(buffer: SharedArrayBuffer) {
    this.since = new Float64Array(buffer, 0, 1);
    this.length = new Int32Array(buffer, 8, 1);
    this.text = new Uint8Array(buffer, 12);
  }

  static buffer(): SharedArrayBuffer {
    return new SharedArrayBuffer(12 + 4096);
  }

  /** A call (its params as JSON, cut to 600 characters for the message), or loading work (`doing`). */
  start(what: { kernel?: string; fn?: string; args?: unknown[]; package?: string; doing?: string }): void {
    // A CPU twin's first argument is its firing: its params are what the message names.
    const params = what.fn === 'cpu' ? (what.args?.[0] as { params?: unknown } | undefined)?.params : what.args?.[0];
    const shown = { ...what, args: undefined, params: what.args ? stableJson(params).slice(0, 600) : undefined };
    const { written } = new TextEncoder().encodeInto(JSON.stringify(shown), this.text);
    this.length[0] = written;
    this.since[0] = Date.now();
  }

  stop(): void {
    this.since[0] = 0;
  }

  /** When the current call began (0: none) and what it is. */
  read(): { since: number; what: DoingWhat | undefined } {
    const since = this.since[0];
    let what: DoingWhat | undefined;
    try {
      what = JSON.parse(new TextDecoder().decode(this.text.slice(0, this.length[0])));
    } catch {
      what = undefined;
    }
    return { since, what };
  }
}

// Shared by the agent benchmarks: documents, a local cluster, table printing.
import { readFileSync } from 'node:fs';
import { analyseTrace, programHosts, type ImplementationGraph, type ProjectDocument, type Coordinator, type Progress, type RunResult } from '@pipeloom/core';
import { spawnLocalAgents, type LocalAgents } from '../src/local/spawn.js';
import { compileOrThrow, connect, piic } from '../src/testing/fixtures.js';
import { gpusPerHost } from '../src/cli/agents.js';
import { gpuFor } from '../src/devices/discover.js';

export { compileOrThrow, piic };

/** Matrix side for a byte size (f32 square). */
export const sideFor = (bytes: number) => Math.round(Math.sqrt(bytes / 4));

/** P-I-I-C (Fig 12) with the consumer checking nb_loop's increments. */
export function piicDoc(side: number, nbLoop: number, iterations: number): ProjectDocument {
  const doc = piic({ size: side, nbLoop, iterations });
  const c = doc.app.nodes.find((n) => n.id === 'C')!;
  c.params = { width: side, height: side, increments: `${nbLoop},${nbLoop}`, expected_offset: 0 };
  return doc;
}

/** P (cpu) -> I (gpu0) -> C (cpu) on one host. */
export function picDoc(side: number, nbLoop: number, iterations: number): ProjectDocument {
  return {
    format: 'pipeloom/v2',
    name: 'P-I-C on one host',
    app: {
      nodes: [
        { id: 'P', kernel: 'matrix.produce', params: { width: side, height: side } },
        { id: 'I', kernel: 'matrix.increment', params: { width: side, height: side, nb_loop: nbLoop } },
        { id: 'C', kernel: 'matrix.consume', params: { width: side, height: side, increments: String(nbLoop) } },
      ],
      edges: [
        { from: { node: 'P', port: 'out' }, to: { node: 'I', port: 'in' } },
        { from: { node: 'I', port: 'out' }, to: { node: 'C', port: 'in' } },
      ],
    },
    arch: { hosts: [{ id: 'h0', cpus: 1, gpus: 1 }] },
    mapping: { P: 'cpu@h0', I: 'gpu0@h0', C: 'cpu@h0' },
    options: { overlap: false, iterations },
  } as unknown as ProjectDocument;
}

export interface Cluster {
  local: LocalAgents;
  coordinator: Coordinator;
  close(): Promise<void>;
}

/**
 * `--backend NAME`: the Dawn backend of the benches' GPUs, the local agents' and the hand
 * loops' alike. 'opengl' (default) reaches llvmpipe; 'vulkan' a real GPU (local hosts share it).
 */
export const benchBackend = (() => {
  const i = process.argv.indexOf('--backend');
  return i >= 0 ? process.argv[i + 1] : 'opengl';
})();
/** What a table row says the GPUs were. */
export const gpuLabel = (backend = benchBackend) => (backend === 'opengl' ? 'llvmpipe' : `real GPU (${backend})`);

/** A device on `backend` with the adapter's buffer limits, for the hand-written baselines. */
export async function openBenchDevice(backend = benchBackend): Promise<GPUDevice> {
  const gpu = await gpuFor(backend);
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' } as GPURequestAdapterOptions);
  if (!adapter) throw new Error(`no WebGPU adapter on backend ${backend}`);
  const l = adapter.limits;
  return adapter.requestDevice({ requiredLimits: { maxBufferSize: l.maxBufferSize, maxStorageBufferBindingSize: l.maxStorageBufferBindingSize } });
}

export async function cluster(ig: ImplementationGraph, linkRate?: number, env?: Record<string, string>): Promise<Cluster> {
  const hosts = programHosts(ig);
  const args = benchBackend === 'opengl' ? undefined : ['--backend', benchBackend];
  const local = await spawnLocalAgents(hosts, { gpus: gpusPerHost(ig), linkRate, env, args });
  const coordinator = await connect(
    local.agents.map((a) => a.url),
    local.token,
  );
  return {
    local,
    coordinator,
    close: async () => {
      coordinator.close();
      await local.stop();
    },
  };
}

export async function runOrThrow(
  c: Cluster,
  ig: ImplementationGraph,
  iterations: number,
  linkRate?: number,
  keepEvents = true,
  emulateLinks = false,
  onProgress?: (p: Progress) => void,
): Promise<RunResult> {
  const r = await c.coordinator.run(ig, { iterations, linkRate, keepEvents, emulateLinks, onProgress }).done;
  if (!r.ok) throw new Error(`run failed: ${JSON.stringify(r.failure)}`);
  return r;
}

/** Steady-state seconds per cycle (core's trace analysis: fill and drain left out). */
export const cycleTime = (ig: ImplementationGraph, r: RunResult): number =>
  analyseTrace(r.events, { fillCycles: ig.fillCycles, iterations: r.iterations }).cycleTime;

/** Mean duration (seconds) of events matching `pred`, fill cycles included. */
export function meanDuration(r: RunResult, pred: (e: RunResult['events'][number]) => boolean): number {
  const xs = r.events.filter(pred).map((e) => (e.end - e.start) / 1e6);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
}

export function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padStart(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * CPU seconds (user + system) used so far by these processes, all their threads, from Linux's
 * /proc (clock ticks of 1/100 s); NaN where there is no /proc.
 */
export function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      return NaN;
    }
  }
  return ticks / 100;
}

/** Median (the mean of the middle two for an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export const ms = (s: number) => (s * 1000).toFixed(2);
export const us = (s: number) => (s * 1e6).toFixed(0);

/** Reads `--name value` from the bench's argv. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
export function argList(name: string, fallback: number[]): number[] {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1].split(',').map(Number) : fallback;
}

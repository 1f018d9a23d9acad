import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { MachineIdentity, PeCapabilities, PeReport } from '@pipeloom/core';

// Device discovery: the host's CPU and every WebGPU adapter Dawn finds. The backend is a
// setting (`--backend`); the OpenGL route reaches Mesa's llvmpipe on machines without a GPU.

export interface GpuHandle {
  adapter: GPUAdapter;
  index: number;
  name: string;
  vendor: string;
  backend: string;
  powerPreference: GPUPowerPreference;
}

export interface Devices {
  host: string;
  /** The machine this agent runs on (two agents on one machine report the same id); absent in hand-made test devices. */
  machine?: MachineIdentity;
  pes: PeReport[];
  /** GPU PE id -> the adapter serving it. */
  gpus: Map<string, GpuHandle>;
}

export interface DiscoverOptions {
  host: string;
  /** Dawn backend: 'opengl' (default; llvmpipe fallback), 'vulkan', 'metal', 'd3d12'. */
  backend?: string;
  /**
   * Serve N GPU PEs even when fewer adapters exist, sharing the first adapter (local runs of
   * documents that need more GPUs than the machine has). 0 = one PE per adapter.
   */
  emulateGpus?: number;
  /** Serve the CPU only, whatever adapters the machine has (their GPUs are kept for other work). */
  cpuOnly?: boolean;
  /** Bytes the CPU PEs offer for buffers, together (default: half the free memory). */
  cpuMemory?: number;
  /** CPU PEs served, one per core given to the agent (default: defaultCpus()). */
  cpus?: number;
}

/** Most CPU PEs one agent serves (`--cpus`): a bound on its threads, far above real hosts' cores. */
export const MAX_CPUS = 256;

/** The cores left after one for the agent's own work (sockets, peers, trace), at least 1. */
export function defaultCpus(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

type GpuFactory = { requestAdapter(o?: GPURequestAdapterOptions): Promise<GPUAdapter | null> };
const gpuByBackend = new Map<string, GpuFactory>();

export async function gpuFor(backend: string): Promise<GpuFactory> {
  let gpu = gpuByBackend.get(backend);
  if (!gpu) {
    process.env.EGL_PLATFORM ??= 'surfaceless';
    const { create, globals } = await import('webgpu');
    Object.assign(globalThis, globals);
    gpu = create([`backend=${backend}`]) as GpuFactory;
    gpuByBackend.set(backend, gpu);
  }
  return gpu;
}

export async function discover(opts: DiscoverOptions): Promise<Devices> {
  const backend = opts.backend ?? 'opengl';
  const cpus = os.cpus();
  const n = opts.cpus ?? defaultCpus();
  // One PE per core given (each its own worker thread in a run); they share the host's memory,
  // so each reports all of it and a deploy's CPU buffers together must fit it (deploy-limits.ts).
  // `cores`, what `requires cores>=` tests, is the number of cores given to this agent.
  const memory = opts.cpuMemory ?? Math.floor(os.freemem() / 2);
  const model = `${cpus[0]?.model?.trim() || 'CPU'} x${cpus.length}`;
  const pes: PeReport[] = Array.from({ length: n }, (_, i) => ({
    id: `cpu${i}@${opts.host}`,
    kind: 'cpu',
    name: model,
    vendor: os.arch(),
    memory,
    capabilities: { kind: 'cpu', cores: n, memory, vendor: os.arch(), description: model },
  }));
  const gpus = new Map<string, GpuHandle>();
  const adapters: GpuHandle[] = [];
  // The chosen backend first; the OpenGL route (Mesa's llvmpipe without a GPU) as the fallback.
  for (const b of opts.cpuOnly ? [] : backend === 'opengl' ? ['opengl'] : [backend, 'opengl']) {
    try {
      const gpu = await gpuFor(b);
      // Dawn exposes one adapter per power preference at most; ask both and keep distinct ones.
      // Its OpenGL backend has one (the EGL display's), and each request prints Dawn's two
      // "artificially reduced" warnings again: ask it once.
      for (const pref of b === 'opengl' ? (['high-performance'] as const) : (['high-performance', 'low-power'] as const)) {
        const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility', powerPreference: pref } as GPURequestAdapterOptions);
        if (!adapter) continue;
        const info = adapter.info;
        const name = info.description || info.device || info.architecture || 'WebGPU adapter';
        const vendor = info.vendor || 'unknown';
        if (adapters.some((a) => a.name === name && a.vendor === vendor)) continue;
        adapters.push({ adapter, index: adapters.length, name, vendor, backend: b, powerPreference: pref });
      }
    } catch (e) {
      process.stderr.write(`pipeloom agent: WebGPU backend ${b}: ${e instanceof Error ? e.message : String(e)}\n`);
    }
    if (adapters.length) break;
    if (b !== 'opengl') process.stderr.write(`pipeloom agent: no adapter on backend ${b}; trying opengl\n`);
  }
  // No WebGPU at all: the agent still serves its CPU; a document needing a GPU is refused by the check.
  const count = opts.emulateGpus && adapters.length ? Math.max(opts.emulateGpus, adapters.length) : adapters.length;
  for (let i = 0; i < count; i++) {
    const a = adapters[Math.min(i, adapters.length - 1)];
    const id = `gpu${i}@${opts.host}`;
    gpus.set(id, a);
    pes.push({
      id,
      kind: 'gpu',
      name: i < adapters.length ? a.name : `${a.name} (shared with gpu${a.index})`,
      vendor: a.vendor,
      memory: Number(a.adapter.limits.maxBufferSize) * 4,
      limits: { maxBufferSize: Number(a.adapter.limits.maxBufferSize), maxStorageBufferBindingSize: a.adapter.limits.maxStorageBufferBindingSize },
      adapter: a.index,
      backend: a.backend,
      capabilities: adapterCapabilities(a),
    });
  }
  return { host: opts.host, machine: machineIdentity(), pes, gpus };
}

/** Names of software rasterisers in an adapter's description or device (how `software` is derived besides Dawn's fallback flag). */
const SOFTWARE = /\b(llvmpipe|lavapipe|softpipe|swiftshader|swrast|warp|microsoft basic render)\b/i;

/** What a GPU PE offers a node's `requires` (core run/requires.ts): the adapter's info, features and limits. */
function adapterCapabilities(a: GpuHandle): PeCapabilities {
  const { adapter } = a;
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  const limits: Record<string, number> = {};
  // GPUSupportedLimits' fields are getters on its prototype: walk the prototype for their names.
  for (const name of Object.keys(Object.getOwnPropertyDescriptors(Object.getPrototypeOf(adapter.limits)))) {
    const v = (adapter.limits as unknown as Record<string, unknown>)[name];
    if (typeof v === 'number') limits[name] = v;
  }
  const named = SOFTWARE.exec(`${info.description} ${info.device} ${info.architecture}`);
  const software = Boolean(info.isFallbackAdapter) || named !== null;
  const level = (adapter as GPUAdapter & { featureLevel?: string }).featureLevel;
  return {
    kind: 'gpu',
    memory: Number(adapter.limits.maxBufferSize) * 4,
    vendor: info.vendor || undefined,
    architecture: info.architecture || undefined,
    device: info.device || undefined,
    description: info.description || undefined,
    backend: a.backend,
    // Adapters are requested at the compatibility level (ENVIRONMENT.md); one reporting "core" offers more.
    featureLevel: level === 'core' || adapter.features.has('core-features-and-limits') ? 'core' : 'compatibility',
    features: [...adapter.features].map(String).sort(),
    limits,
    software,
    softwareWhy: info.isFallbackAdapter
      ? 'WebGPU reports a fallback adapter'
      : named
        ? `its adapter info names ${named[1]}, a software rasteriser`
        : 'no software rasteriser named, not a fallback adapter',
  };
}

/** The hostname and a hash of the OS machine id (never the id itself); the hostname's hash where there is none. */
export function machineIdentity(): MachineIdentity {
  let id = '';
  for (const f of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      id = readFileSync(f, 'utf8').trim();
      if (id) break;
    } catch {
      // Not on this system: try the next, else the hostname.
    }
  }
  return {
    hostname: os.hostname(),
    id: createHash('sha256')
      .update(`pipeloom:${id || os.hostname()}`)
      .digest('hex')
      .slice(0, 16),
  };
}

/**
 * A device for one run, from a fresh adapter (an adapter gives one device only), with the
 * buffer limits raised to what the adapter allows.
 */
export async function openDevice(handle: Pick<GpuHandle, 'backend' | 'powerPreference' | 'name'>, pe?: string): Promise<GPUDevice> {
  const gpu = await gpuFor(handle.backend);
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility', powerPreference: handle.powerPreference } as GPURequestAdapterOptions);
  if (!adapter) throw new Error(`${pe ? `${pe}: ` : ''}adapter ${handle.name} is gone`);
  const l = adapter.limits;
  return adapter.requestDevice({
    requiredLimits: {
      maxBufferSize: l.maxBufferSize,
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    },
  });
}

import type { PeProgram, TraceEvent, FailureReport } from '@pipeloom/core';
import type { BufferInfo, HostStorage } from './memory.js';

// Messages between an agent's main thread and its PE threads (worker_threads).

export interface PeInit {
  type: 'init';
  host: string;
  program: PeProgram;
  iterations: number;
  cycles: number;
  pes: Record<string, { host: string; kind: 'cpu' | 'gpu' }>;
  buffers: BufferInfo;
  /** Every host buffer of this agent (the GPU thread drives host<->GPU copies). */
  hostStorage: HostStorage;
  /** For GPU PEs: which adapter to open. */
  gpu?: { backend: string; powerPreference: GPUPowerPreference; name: string };
  traceInterval: number;
  /** The host's local barrier (local-barrier.ts): Int32 [arrived, generation]. */
  sync: SharedArrayBuffer;
  /** This PE's firing stamp for the watchdog (watchdog.ts), and the run's epoch in ms (timeOrigin-based). */
  watch: SharedArrayBuffer;
  epoch: number;
  /** Link emulation (emulate.ts): transfers last at least their link's time. */
  emulateLinks: boolean;
  /** Device emulation (emulate.ts): seconds each firing of these nodes lasts at least. */
  emulateDevices?: Record<string, number>;
  /** Slow-PE emulation: after each firing this PE sleeps (slow - 1) x the firing's time. */
  slow?: number;
  /** Staging memory of each GPU-to-GPU transfer of this host, by transferKey (staging.ts). */
  staging: Record<string, SharedArrayBuffer>;
  /** Self-timed execution (counters.ts): the host's counters and this PE's part of the plan; absent in barrier mode. */
  selfTimed?: { counters: SharedArrayBuffer; plan: import('@pipeloom/core').ActionPlan[][] };
}

export type ToPe = PeInit | { type: 'start' } | { type: 'abort'; reason: string } | { type: 'free' };

export type FromPe =
  /** Deploy progress: the thread has set up its device and buffers and prepares its kernels. */
  | { type: 'step'; step: 'kernels' }
  | { type: 'ready'; adapter?: string; allocated: number; heapUsed: number }
  | { type: 'error'; message: string }
  | { type: 'trace'; events: TraceEvent[]; cycle: number }
  | { type: 'report'; node: string; iteration: number; values: Record<string, number | number[] | string> }
  | { type: 'failed'; failure: FailureReport }
  | { type: 'done'; heapUsed: number }
  | { type: 'freed' };

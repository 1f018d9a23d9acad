import type { GpuExecutor, Kernel, Params } from '@pipeloom/kernels';
import type { Action } from '@pipeloom/core';
import type { Range, Slots } from './memory.js';

// The actions of a static run's PE thread and what it prepares for them (pe-worker.ts).

export type Fire = Extract<Action, { op: 'fire' }>;
export type Transfer = Extract<Action, { op: 'transfer' }>;

export type KernelReport = { ok: boolean; message?: string; values?: Record<string, number | number[] | string> };
/** A firing's ports: each port's buffer slots, the slot this cycle uses and the range it touches (a view). */
export type PortSlots = Record<string, { slots: Slots; slot: number; range: Range }>;
/** A firing's inputs fed in parts that are not views of one base: per port, its parts, gathered (copied) before it fires. */
export type GatherSlots = Record<string, { slots: Slots; slot: number; range: Range }[]>;

export interface PreparedFire {
  kernel: Kernel;
  params: Params;
  state: Record<string, unknown>;
  gpu?: GpuExecutor;
  /** GPU PE whose kernel has no WGSL: host copies for its CPU twin. */
  twin?: { inputs: Record<string, ArrayBufferView>; outputs: Record<string, ArrayBufferView> };
}

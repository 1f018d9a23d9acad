// Messages between the agent's main thread and a task-bag PE thread (task-worker.ts). Buffers
// travel as SharedArrayBuffer-backed bytes: posting them shares them, nothing is copied.

export interface TaskPeInit {
  type: 'init';
  pe: string;
  kind: 'cpu' | 'gpu';
  /** For GPU PEs: which adapter to open (devices/discover.ts openDevice). */
  gpu?: { backend: string; powerPreference: GPUPowerPreference; name: string };
  /** The thread's task stamp for the watchdog (runtime/watchdog.ts: the running task's seq), and the epoch it counts from (ms, timeOrigin-based). */
  watch: SharedArrayBuffer;
  epoch: number;
}

export interface TaskRun {
  type: 'run';
  seq: number;
  /** The node (its index) and params: a GPU PE keeps one prepared kernel per pair. */
  node: number;
  kernel: string;
  params: Record<string, number | string | boolean>;
  iteration: number;
  inputs: Record<string, Uint8Array>;
  outputs: Record<string, Uint8Array>;
}

export type ToTaskPe = TaskPeInit | TaskRun | { type: 'free' };

export type FromTaskPe =
  | { type: 'ready'; adapter?: string }
  | { type: 'error'; message: string }
  /** `start`, `end`: µs on this machine's clock (timeOrigin-based, the same in every thread). */
  /** `values`: what a checking or measuring kernel reported (forwarded in task-done). */
  | { type: 'done'; seq: number; start: number; end: number; values?: Record<string, number | number[] | string> }
  | { type: 'failed'; seq: number; message: string }
  /** The PE's device is gone: every task given to it fails. */
  | { type: 'lost'; message: string }
  | { type: 'freed' };

/** A failure's message for the coordinator: its first line, bounded, never a stack. */
export function shortMessage(e: unknown): string {
  const s = e instanceof Error ? e.message : String(e);
  return (s.split('\n')[0] || 'failed').slice(0, 300);
}

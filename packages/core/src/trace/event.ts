// One event model for predicted and measured timelines.
/** `counter`: a sampled value (`value`), drawn as a counter track (the task bag's depth). */
export type TraceKind = 'fire' | 'transfer' | 'wait' | 'barrier' | 'counter';

export interface TraceEvent {
  host: string;
  pe: string;
  /** Thread of control within the PE: 'main' for the PE's thread; `send:<peer PE>` / `recv:<peer PE>` for transfer lanes (trace/lanes.ts). */
  thread: string;
  kind: TraceKind;
  /** Node id for fire, buffer id (destination) for transfer, barrier/wait label otherwise. */
  name: string;
  node?: string;
  buffer?: string;
  /** Source buffer of a transfer (for flow arrows). */
  from?: string;
  iteration: number;
  cycle: number;
  /** Microseconds since the run's start (predicted: since cycle 0). */
  start: number;
  end: number;
  bytes?: number;
  /** Task-bag runs: the task a fire (or pull) belongs to; its slice is labelled `node[share]@iteration (attempt)`. */
  task?: { id: string; share?: number; attempt: number };
  /** `counter` events: the value from `start` on. */
  value?: number;
}

/** A task's slice label: `projbp[3]@5 (2)`; the attempt is shown from the second on. */
export const taskSlice = (id: string, attempt: number) => (attempt > 1 ? `${id} (${attempt})` : id);

/** A barrier slice's name: what it is and which phase it closes (the agents and the predictor name them alike). */
export const barrierSlice = (phase: string) => `barrier ${phase}`;
/** A wait slice's name: the buffer waited for (`detail`: how it comes, e.g. a staged copy's route). */
export const waitSlice = (buffer: string, detail?: string) => (detail ? `wait ${buffer} ${detail}` : `wait ${buffer}`);

import type { DataType } from '@pipeloom/kernels/specs';
import type { BufferId, HostId, NodeId, PeId } from '../ids.js';
import type { Diagnostic } from '../diagnostics.js';
import type { LinkKind } from '../document/types.js';
import type { Clause } from '../document/requires.js';

// The implementation graph (IG, paper section 4.2): the DFG with buffer nodes inserted along
// architecture paths, each pass adding its part.

/**
 * The buffer nodes of the IG, one column per field, by buffer number k (bn_k): on a 10,000-
 * node graph ~35,000 buffers, which as objects were 9 MB of the compile's output. `bufferNode`
 * (compile/decode.ts) reads one back as a `BufferNode`.
 */
export interface Buffers {
  count: number;
  /** `bn_k`. */
  id: BufferId[];
  /** The PE holding it: its position in `ig.programs.pes` (architecture order). */
  pe: Int32Array;
  /** The DFG node whose output it holds (possibly many hops upstream): its schedule position (ig.order). */
  source: Int32Array;
  /** The source node's output port. */
  port: string[];
  /** The buffer it is copied from; -1 for the producer's own buffer (written by its source). */
  parent: Int32Array;
  /**
   * For a copy of part of its parent (a lowered multi-rate split read on another PE: only the
   * part crosses): where that part starts in the parent, in bytes; its size is `bytes`. 0 for a
   * whole copy.
   */
  parentOffset: Float64Array;
  /** Its data type: an index into `types`. */
  type: Int32Array;
  types: DataType[];
  bytes: Float64Array;
  /** Slots: 1 = single, 2 = double, more where an early input waits for a late sibling (see BufferNode.depth). */
  depth: Int32Array;
  /** Memory colour on its PE; buffers of one colour share storage. */
  color: Int32Array;
  /**
   * Views (multi-rate joins): -1, or the number of the buffer whose storage this one lives in,
   * at byte `viewOffset` of it (the parts a join reads, laid out contiguously, so the consumer
   * reads one range and nothing is copied). The memory pass colours a base and its views as one
   * unit: they share the base's colour, at their offsets.
   */
  view: Int32Array;
  viewOffset: Float64Array;
  /**
   * Delays: how many iterations of initial tokens the buffer holds before cycle 0 (the reader
   * of a delayed edge reads them first); 0 for none. Its slots are filled before the run, so
   * the memory pass never lets another buffer share its storage.
   */
  initial: Int32Array;
  /** Copies of buffer k on other PEs: next.list[next.start[k] .. next.start[k + 1]), in number order. */
  next: { start: Int32Array; list: Int32Array };
  /** Computation nodes on its PE reading buffer k: consumers.node[i] (schedule position) on input consumers.port[i], for i in start[k] .. start[k + 1]). */
  consumers: { start: Int32Array; node: Int32Array; port: string[] };
}

/** One buffer as an object (compile/decode.ts `bufferNode`): what the CLI prints and the designer draws. */
export interface BufferNode {
  /** `bn_k`, numbered in insertion order. */
  id: BufferId;
  pe: PeId;
  /** The DFG node whose output this buffer holds (possibly many hops upstream). */
  source: NodeId;
  /** The source node's output port. */
  port: string;
  /** Upstream: the producing node (on the same PE) or the buffer it is copied from. */
  from: { node: NodeId } | { buffer: BufferId };
  /** Computation nodes on this PE reading this buffer, with the input port they read it on. */
  consumers: { node: NodeId; port: string }[];
  /** Downstream buffers on other PEs copied from this one. */
  next: BufferId[];
  type: DataType;
  bytes: number;
  /**
   * Slots: 1 = single, 2 = double (set by the depth pass). The latency pass deepens a buffer
   * beyond 2 only where a node's inputs arrive in different cycles and the early one must be
   * kept until the late one arrives (reconvergent paths of unequal delay).
   */
  depth: number;
  /** Memory colour on its PE (set by the memory pass); buffers of one colour share storage. */
  color: number;
}

export interface MemoryReport {
  /** Sum of every buffer's bytes x depth. */
  before: number;
  /** Sum over colours of the largest member's bytes x depth. */
  after: number;
  /** Lower bound: the heaviest clique found in the incompatibility graph. */
  lowerBound: number;
  /**
   * The storage of each colour, by colour number: its largest member's bytes x depth. The
   * members are the PE's buffers with that `buffers.color` (decode.ts `colorGroups` lists them).
   */
  colorBytes: number[];
  /** PE capacity, for the UI. */
  capacity: number;
  /** Buffers laid out as views in another's storage (the parts of joins read as one range: nothing copied). */
  views?: number;
  /** Inputs fed in parts that are not views: each firing gathers (copies) its parts into a scratch buffer of `gatherBytes` in all. */
  gathers?: number;
  gatherBytes?: number;
}

/**
 * A buffer access inside a cycle. The slot used in cycle k is ((k - lag) mod depth), and `lag`
 * is the number of cycles between the write and this read of the same data. A writer always
 * has lag 0; a reader that runs after the writer in the same cycle has lag 0; a reader that
 * runs concurrently with the writer (overlap) or before it in the cycle (without overlap, a
 * copy of what a firing wrote last cycle) has lag 1; a firing whose other input arrives later
 * reads the early one with a larger lag from a deeper buffer. See compile/programs.ts.
 */
export interface BufferAccess {
  buffer: BufferId;
  /** Cycles between the write and this read; > 1 only on inputs kept for a late sibling input. */
  lag: number;
  /**
   * A view (lowered multi-rate graphs): the access touches bytes offset .. offset + bytes of the
   * buffer's place in its storage, not the whole buffer. Absent: offset 0, the buffer's bytes.
   * A split's part reads a range of the producer's buffer; a join laid out as views reads from
   * its base a range longer than the base itself, covering the parts laid out after it.
   */
  offset?: number;
  bytes?: number;
}

/**
 * One step of a PE's per-cycle program, in the form agents receive (compile/decode.ts makes it
 * from the IG's compact `Programs`). Programs are executed by agents, one thread per PE.
 */
export type Action =
  | {
      op: 'fire';
      node: NodeId;
      kernel: string;
      params: Record<string, number | string | boolean>;
      /** First cycle this node fires (its latency); in cycle k it processes iteration k - startCycle. */
      startCycle: number;
      inputs: Record<string, BufferAccess>;
      outputs: Record<string, BufferAccess>;
      /**
       * Inputs fed in parts (a lowered multi-rate join), by port: each part's access, in the
       * order they land in the input (contiguous, from byte 0). Where the parts are laid out as
       * views of one base, `inputs` also has the port (one contiguous read of the base) and
       * nothing is copied; where it has not, the agent gathers the parts into one scratch
       * buffer (a copy) before the firing.
       */
      parts?: Record<string, BufferAccess[]>;
    }
  | {
      op: 'transfer';
      from: BufferAccess;
      to: BufferAccess;
      fromPe: PeId;
      toPe: PeId;
      bytes: number;
      /** First cycle of this transfer; in cycle k it moves iteration k - startCycle. */
      startCycle: number;
      /** The architecture link it crosses: what a run with link emulation makes it last. */
      link: { kind: LinkKind; bandwidth: number; latency: number };
    }
  | { op: 'barrier'; label: string };

export interface Phase {
  /** e.g. 'h2d', 'cpu-cpu', 'd2h', 'fire', or 'overlap' */
  name: string;
  actions: Action[];
  /** A cluster-wide barrier closes the phase. */
  barrier: boolean;
}

/** A PE's program as deployed to its agent (compile/decode.ts `peProgram`). */
export interface PeProgram {
  pe: PeId;
  host: HostId;
  kind: 'cpu' | 'gpu';
  /** Buffers allocated on this PE: storage per colour, slots per depth; `offsets[i]` (absent: 0) is where buffers[i] starts in each slot (a view). */
  allocations: { color: number; bytes: number; depth: number; buffers: BufferId[]; offsets?: number[] }[];
  /** The per-cycle phases, in order. Every PE runs the same number of phases so barriers line up. */
  phases: Phase[];
  /**
   * Delays (feedback): storage slots the agent fills before the run with initial tokens, which
   * a delayed edge's reader reads in its first iterations (the consumer's iteration k reads the
   * producer's k - delay; for k < delay, initial token k). Absent or empty: none.
   */
  initial?: InitialFill[];
}

/**
 * Slots slot .. slot + count - 1 of one buffer filled before the run: with `value` in every
 * element (the buffer's element type), or with output `port` of the source kernel `kernel` (its
 * params `params`, no inputs) fired once on its CPU twin per slot, for iteration `token` in the
 * first slot, token + 1 in the next and so on (the initial tokens' indices). The bytes filled
 * are offset .. offset + bytes of the buffer's place in each slot (absent: all).
 */
export interface InitialFill {
  buffer: BufferId;
  slot: number;
  /** Consecutive slots from `slot` (absent: 1); the range never wraps past the storage's last slot. */
  count?: number;
  offset?: number;
  bytes?: number;
  value?: number;
  kernel?: string;
  params?: Record<string, number | string | boolean>;
  port?: string;
  token?: number;
}

/** The architecture link a transfer crosses, as the programs give it. */
export type TransferLink = Extract<Action, { op: 'transfer' }>['link'];

/**
 * The per-PE programs of paper 4.3, compact: numbers in typed arrays that index the IG's
 * buffers (by number k, bn_k) and its schedule (ig.order), instead of an object per action.
 * On the 10,000-node bench graph the action objects were 14 MB of the compile's output and a
 * third of its time; these columns are a few hundred kilobytes and cross a worker boundary as a
 * handful of copies. `peProgram` (compile/decode.ts) expands one PE's program into the
 * `PeProgram` its agent runs; `actionRange` gives a (PE, phase)'s entries for a walk that
 * makes no objects (the predictor's).
 */
export interface Programs {
  /** The PEs in architecture order. `slots` is, per memory colour (ig.memory[pe].colors, in order), how many slots its storage has. */
  pes: { pe: PeId; host: HostId; kind: 'cpu' | 'gpu'; slots: Int32Array }[];
  /**
   * The actions of the PE at position p of `pes` in phase f of the cycle are
   * list[start[p * phases + f] .. start[p * phases + f + 1]), in the order the agent runs them.
   * An entry k >= 0 is the transfer that fills buffer k (listed by both PEs it connects); an
   * entry < 0 is the firing of the node at schedule position -entry - 1.
   */
  start: Int32Array;
  list: Int32Array;
  /** By buffer number, for a buffer filled by a transfer: the buffer it reads, with which lag, from which cycle, over which link (index into `links`). -1 where no transfer fills it. */
  transfer: { from: Int32Array; lag: Int32Array; startCycle: Int32Array; link: Int32Array };
  links: TransferLink[];
  /** By schedule position: the firing's kernel, params and first cycle; its input and output accesses as flat lists (CSR). */
  fire: {
    kernel: string[];
    params: Record<string, number | string | boolean>[];
    startCycle: Int32Array;
    /** Inputs of position s: port[i], buffer[i], lag[i] for i in start[s] .. start[s + 1]), in kernel port order. */
    inputs: AccessList;
    /** Outputs, likewise (lag 0). */
    outputs: AccessList;
    /** The capability clauses each firing's PE must meet (its node's `requires`; undefined for none): Coordinator.check tests them against the agents. */
    requires: (Clause[] | undefined)[];
  };
  /** Delays: per PE (as `pes`), the slots filled with initial tokens before the run (compile/initial.ts); absent without delays. */
  initial?: InitialFill[][];
}

/** Buffer accesses as flat lists: item i belongs to the owner o with start[o] <= i < start[o + 1]. */
export interface AccessList {
  start: Int32Array;
  port: string[];
  buffer: Int32Array;
  lag: Int32Array;
  /**
   * The bytes accessed in the buffer: offset[i] .. offset[i] + bytes[i] (a split's part reads a
   * range of its producer's buffer). An input fed in parts (a join) has one item per part, with
   * the same port, in the order they land.
   */
  offset: Float64Array;
  bytes: Float64Array;
  /**
   * Where the bytes read start in their source's output (the edge's part), whatever buffer
   * holds them: what the read must see (compile/simulate.ts checks it); 0 for outputs.
   */
  origin: Float64Array;
  /** Iterations back (delays): the item reads what its source wrote for the firing's iteration - delay[i]; 0 for most. */
  delay: Int32Array;
}

export interface ImplementationGraph {
  overlap: boolean;
  /** Firing order index per node (paper 4.2.1). */
  schedule: Record<NodeId, number>;
  /** Nodes in schedule order. */
  order: NodeId[];
  /** The buffer nodes, as columns (see `Buffers`). */
  buffers: Buffers;
  /** Input latency of each node in cycles (paper 4.2.5). */
  latency: Record<NodeId, number>;
  memory: Record<PeId, MemoryReport>;
  /** The per-PE programs, compact (see `Programs`). */
  programs: Programs;
  /** Cycles until the last node has processed iteration 0. */
  fillCycles: number;
  /** The phase names every program runs each cycle, in order (same list on every PE). */
  phases: string[];
  /**
   * By phase: whether a cluster-wide barrier closes it. Absent: every phase's does. Only a
   * scan's firing has phases without one (compile/phases.ts): from the first fire phase to the
   * cycle's last, its PEs wait point to point for their own inputs.
   */
  phaseBarriers?: boolean[];
  /**
   * Scans, by scan node as written: its expanded nodes' schedule positions, by level
   * (0 the locals, each later level fired in its own phase of the same cycle). Absent without scans.
   */
  scans?: Record<string, number[][]>;
}

export type CompileResult = { ok: true; ig: ImplementationGraph; diagnostics: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] };

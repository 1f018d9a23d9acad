/// <reference types="@webgpu/types" />
// The kernel registry is data: ports, params, sizes, cost hints (the spec), WGSL and a CPU twin
// (the implementation). The editor's palette and the compiler's byte sizes read specs
// (specs.ts); the agent's executors read kernels (registry.ts).

export type ElementType = 'f32' | 'u32' | 'i32' | 'u8';

/** Threads per workgroup of every 1D kernel (within the compatibility limit of 256); specs bound sizes by it. */
export const WORKGROUP = 64;

export const ELEMENT_BYTES: Record<ElementType, number> = { f32: 4, u32: 4, i32: 4, u8: 1 };

/** The data type carried by an edge, resolved from the producer's params at compile time. */
export interface DataType {
  /** Semantic kind, e.g. 'matrix', 'volume', 'image', 'spectrum', 'maps', 'curve'. */
  kind: string;
  element: ElementType;
  /** Extents, innermost last (e.g. [height, width] or [depth, height, width] or [maps, h, w, 2]). */
  shape: number[];
}

export type ParamValue = number | string | boolean;
export type Params = Record<string, ParamValue>;

export interface ParamSpec {
  type: 'int' | 'float' | 'bool' | 'enum' | 'string';
  default: ParamValue;
  min?: number;
  max?: number;
  /** Allowed values for 'enum'. */
  values?: string[];
  unit?: string;
  /** A 'string' param edited as several lines (source code). */
  multiline?: boolean;
  description: string;
}

export interface PortSpec {
  name: string;
  description?: string;
  /**
   * Resolution function (the paper's term): the data type from the node's params. A repeated
   * port's copies get their index (0, 1, ...) as the second argument.
   */
  type: (params: Params, index?: number) => DataType;
  /**
   * Variadic: the name of an int param giving how many copies of this port a node has; copies
   * are named `<name><i>` (`in0`, `in1`, ...). `portsFor` expands them.
   */
  repeat?: string;
  /**
   * Tokens per firing (synchronous dataflow), default 1: the port's data splits into this many
   * equal tokens along its first dimension. A node's `rates` overrides it.
   */
  rate?: number | ((params: Params) => number);
  /** The port's values must be above 0; says why (a delayed edge's constant init of 0 or less into it is refused). */
  positive?: string;
}

/** Cost hint used by the predictor until measured times replace it. */
export interface CostHint {
  /** Arithmetic work of one firing, in floating-point operations. */
  flops: number;
  /** Bytes read plus written by one firing. */
  bytes: number;
}

/** What one firing sees on the CPU: typed-array views over the buffers. */
export interface CpuFiring {
  params: Params;
  iteration: number;
  inputs: Record<string, ArrayBufferView>;
  outputs: Record<string, ArrayBufferView>;
  /** Internal state across iterations, for kernels that declare `state`. */
  state: Record<string, unknown>;
}

/** The result of a firing that checks or measures something (consumers, curves). */
export interface FiringReport {
  ok: boolean;
  /** Human-readable, names the iteration and first bad index on a failed check. */
  message?: string;
  /** Values a user wants to see (e.g. predominant size). */
  values?: Record<string, number | number[] | string>;
}

export interface GpuFiring {
  iteration: number;
  inputs: Record<string, GPUBuffer>;
  outputs: Record<string, GPUBuffer>;
}

/** A kernel prepared for one device and one set of params. */
export interface GpuExecutor {
  /** Records the firing's passes into the encoder; the agent submits. */
  encode(encoder: GPUCommandEncoder, firing: GpuFiring): void;
  /**
   * Optional read-back step after submission for kernels that check or measure
   * (consume, openings counts). Runs after the queue work of `encode` completes.
   */
  report?(firing: GpuFiring): Promise<FiringReport>;
  destroy(): void;
}

/** One compute dispatch of a firing: which WGSL module, how many workgroups, how many times. */
export interface DispatchInfo {
  module: string;
  workgroups: [number, number, number];
  /** Repeats of this dispatch in one firing (default 1). */
  count?: number;
}

export interface GpuImplementation {
  /** The WGSL sources (one per pipeline), shown in the editor and validated at prepare time. */
  wgsl: Record<string, string>;
  /** The dispatches one firing records, for the editor and the predictor (copies not listed). */
  dispatches?: (params: Params) => DispatchInfo[];
  /** Creates pipelines and uniform buffers; rejects with a KernelError naming the kernel on bad WGSL. */
  prepare(device: GPUDevice, params: Params): Promise<GpuExecutor>;
}

export interface KernelSpec {
  /** Namespaced: `<package>.<name>` (`matrix.add`, `acme.sobel`). */
  id: string;
  /** Semver (`1.2.0`); a deploy is refused when an agent has another major version. */
  version: string;
  /** Where the kernel comes from: `builtin`, or the package path or name it was loaded from. */
  package?: string;
  title: string;
  category: string;
  description: string;
  params: Record<string, ParamSpec>;
  inputs: PortSpec[];
  outputs: PortSpec[];
  /** Kernels with internal state across iterations declare it (the paper: pipelines need them). */
  stateful?: boolean;
  /** False for kernels whose outputs are not a function of inputs, params and iteration (not replayable). Default true. */
  deterministic?: boolean;
  cost: (params: Params) => CostHint;
  /** Runs on GPU PEs only (no CPU twin: `cpu` throws a KernelError); validation refuses a CPU mapping. */
  gpuOnly?: boolean;
  /**
   * Ports declared by the node's params (custom.wgsl's `ports`): replaces `inputs` / `outputs`
   * (which then show the default) for each node. Throws, with a message naming the param, when
   * the params declare no valid ports.
   */
  ports?: (params: Params) => { inputs: PortSpec[]; outputs: PortSpec[] };
  /**
   * What the outputs hold, where every element is `scale * iteration + offset` (exact: the
   * matrix and vector kernels), from the inputs' (undefined where unknown). Lets checkers
   * downstream derive what they expect from the graph.
   */
  values?: (params: Params, inputs: Record<string, IterationValue | undefined>) => Record<string, IterationValue | undefined>;
  /**
   * A checker's expectation derived from what its inputs hold: the params it sets (`params`)
   * unless the document sets any of them itself (the override), or undefined when it cannot.
   */
  expects?: { params: string[]; derive: (inputs: Record<string, IterationValue | undefined>) => Params | undefined };
  /**
   * The kernel's work splits into K shares (a node's `tasks: K`): what lets one firing become K
   * tasks that run anywhere, then a combine. Such a kernel has one output, element f32.
   */
  split?: KernelSplit;
  /**
   * A binary operator's kernel (`defineBinaryKernel`): what core's scan expansion and
   * `pipeloom kernels` read. Its ports follow its `mode` param (binary.ts).
   */
  binary?: KernelBinary;
}

/** A binary operator (+) as data: carried by its kernel's spec and manifest. */
export interface KernelBinary {
  /** exact: any bracketing gives the same bits; approximate: within `tolerance` of the serial result; none: serial only. */
  associativity: 'exact' | 'approximate' | 'none';
  commutative: boolean;
  /** Declares an identity (mode `exclusive` needs one). */
  identity: boolean;
  /** approximate only: largest difference from the serial result, in the operator's own measure. */
  tolerance?: number;
  /** The context ports every application reads, bound after the mode's inputs. */
  context: string[];
  /** 'f32': the payload words are f32 bits, and a result holding NaN or an infinity fails its firing (absent: u32, unchecked). */
  payload?: 'f32';
}

/**
 * How a kernel's firing splits into shares: share j of K takes the interleaved subset j, j + K,
 * j + 2K, ... of its work (the kernel's job), and `combine` joins the shares' outputs.
 */
export interface KernelSplit {
  /** The int param giving K, how many shares. */
  count: string;
  /** The int param giving this share's j < K. */
  index: string;
  /** The int param bounding K (K <= params[range]: each share needs one item of work). */
  range: string;
  /** `sum`: the node's output is the sum of the shares' outputs, in share order (`generic.sum`). */
  combine: 'sum';
}

/** Every element of a stream equals scale * iteration + offset. */
export interface IterationValue {
  scale: number;
  offset: number;
}

/** How a kernel runs: its CPU twin and its WGSL. Kept apart from the spec so that what only reads specs loads no WGSL. */
export interface KernelImplementation {
  /** The CPU twin; returns a report for checking/measuring kernels. */
  cpu: (firing: CpuFiring) => FiringReport | void;
  gpu?: GpuImplementation;
}

/** A kernel as the agents execute it: its spec and its implementation. */
export type Kernel = KernelSpec & KernelImplementation;

export class KernelError extends Error {
  constructor(
    readonly kernel: string,
    message: string,
  ) {
    super(`kernel "${kernel}": ${message}`);
    this.name = 'KernelError';
  }
}

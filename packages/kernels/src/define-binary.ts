import { binaryKernelSpec, binaryOperatorOf, type BinaryOperatorData, type BinaryOperatorSpec } from './binary.js';
import { EMPTY_HI, EMPTY_LO, type BinaryMode } from './binary-modes.js';
import { KernelDefinitionError, portsFor, wgslBindings, type KernelProblem } from './definition.js';
import { bindGroup, createPipeline } from './gpu/pipeline.js';
import {
  KernelError,
  type CpuFiring,
  type DispatchInfo,
  type FiringReport,
  type GpuExecutor,
  type GpuImplementation,
  type Kernel,
  type KernelSpec,
  type Params,
  type PortSpec,
} from './types.js';

// A binary operator's kernel from one definition: the spec (binary.ts) joined to a CPU twin and
// generated WGSL that run each mode around the operator's own application of one pair. Every
// mode brackets left to right and never swaps operands; every application checks that the
// ranges are adjacent (left.hi + 1 = right.lo), and an empty range is the identity (nothing
// fired). The twin and the WGSL make the same applications in the same order, so an operator
// whose application is bit-exact on both gives bit-equal results.

/** What an application knows besides the payloads: the operands' ranges (checked adjacent), and the operator's counters. */
export interface ApplyInfo {
  /** [lo, hi] of the left and the right operand (never empty: an empty one fires nothing). */
  left: readonly [number, number];
  right: readonly [number, number];
  /** Adds v to the named counter (one of `counters`) of this firing. */
  count: (counter: string, v: number) => void;
}

/** How one pair is combined: payload words (the ranges are checked by the kernel and given to read). */
export interface BinaryApply {
  /**
   * out = a (+) b on W payload words (`out` is zeroed first and never aliases a or b);
   * `context` holds the context ports' data; `info` the operands' ranges and the counters.
   */
  cpu: (a: Uint32Array, b: Uint32Array, out: Uint32Array, params: Params, context: Record<string, ArrayBufferView>, info: ApplyInfo) => void;
  /**
   * A WGSL function `fn op_apply(lane: u32, lanes: u32)` (text, or a function of the params
   * giving it). Each call, all `lanes` (64) invocations of one workgroup call it together
   * (uniform control flow: it may use workgroupBarrier) with the operands' payloads in
   * `var<workgroup> op_a, op_b: array<u32, N>` and writes the result's into `op_out` (zeroed
   * first); N = max(OP_W, 1), `const OP_W: u32` = W. Share the work by lane (word lane, lane +
   * lanes, ...) or let lane 0 do it all. Context ports are `var<storage, read> <name>: array<T>`
   * (T from the port's element; u8 as u32 words). It declares no bindings and no entry point;
   * other names it declares must not start with `pl_` (the generated module's). It may read
   * `var<workgroup> op_range: vec4<u32>` (left lo, hi, right lo, hi) and call
   * `op_count(i, v)` from one lane to add v to counter i of `counters`.
   */
  wgsl: string | ((params: Params) => string);
  /**
   * Names of u32 sums one firing accumulates over its applications (e.g. an iterative
   * operator's iterations), at most MAX_COUNTERS; the firing's report carries them as `values`.
   */
  counters?: readonly string[];
  /**
   * Elements one dispatch walks at most in modes scan, reduce and exclusive (default
   * DISPATCH_ELEMENTS); the walk goes on in the next dispatch from where it stopped. A device
   * may bound the loop iterations of one invocation (llvmpipe: 65535, all loops together), so
   * an operator whose application loops a lot walks fewer (reg2d.compose: 1).
   */
  dispatchElements?: number;
}

/** Counters an operator may declare: they ride in the status buffer after its 8 words. */
export const MAX_COUNTERS = 8;
/** Elements a dispatch walks at most unless the operator says fewer (the walk's own loops: a few per element). */
export const DISPATCH_ELEMENTS = 256;

export type BinaryKernelDefinition = BinaryOperatorSpec & { apply: BinaryApply };

/**
 * The public way to write a binary operator: one kernel (id = the operator's) with params
 * `mode` (apply | scan | reduce | propagate | exclusive) and `count`. Throws a
 * KernelDefinitionError listing every problem (kernel, field, fix).
 */
export function defineBinaryKernel(def: BinaryKernelDefinition): Kernel {
  const { apply, ...rest } = def ?? ({} as BinaryKernelDefinition);
  const problems: KernelProblem[] = [];
  let spec: KernelSpec | undefined;
  try {
    spec = binaryKernelSpec(rest as BinaryOperatorSpec);
  } catch (e) {
    if (!(e instanceof KernelDefinitionError)) throw e;
    problems.push(...e.problems);
  }
  problems.push(...applyProblems(String(rest?.id ?? '(no id)'), apply, spec));
  if (problems.length || !spec) throw new KernelDefinitionError(problems);
  return binaryKernel(spec, apply);
}

function applyProblems(id: string, apply: BinaryApply | undefined, spec: KernelSpec | undefined): KernelProblem[] {
  const out: KernelProblem[] = [];
  const bad = (path: string, message: string, hint?: string) => out.push({ kernel: id, path, message, hint });
  if (typeof apply !== 'object' || apply === null) {
    bad('apply', 'is missing', 'give apply: { cpu: (a, b, out, params, context) => void, wgsl: "fn op_apply(lane: u32, lanes: u32) { ... }" }');
    return out;
  }
  if (
    apply.counters !== undefined &&
    (!Array.isArray(apply.counters) ||
      apply.counters.length > MAX_COUNTERS ||
      !apply.counters.every((c) => typeof c === 'string' && /^[a-z][a-z0-9_]*$/i.test(c)) ||
      new Set(apply.counters).size !== apply.counters.length)
  )
    bad(
      'apply.counters',
      `${JSON.stringify(apply.counters)} is not a list of at most ${MAX_COUNTERS} distinct names`,
      'give counters: ["iterations"] (letters, digits, _)',
    );
  if (apply.dispatchElements !== undefined && !(Number.isSafeInteger(apply.dispatchElements) && apply.dispatchElements >= 1))
    bad(
      'apply.dispatchElements',
      `${JSON.stringify(apply.dispatchElements)} is not a whole number >= 1`,
      'give dispatchElements: 1 for an application that loops a lot, or leave it out',
    );
  if (typeof apply.cpu !== 'function')
    bad('apply.cpu', 'is not a function', "give cpu: (a, b, out, params, context) => void, writing a (+) b's payload into out");
  if (typeof apply.wgsl !== 'string' && typeof apply.wgsl !== 'function') {
    bad('apply.wgsl', 'is neither WGSL text nor a function of the params giving it', 'give wgsl: "fn op_apply(lane: u32, lanes: u32) { ... }"');
    return out;
  }
  if (!spec) return out;
  const defaults: Params = Object.fromEntries(Object.entries(spec.params).map(([n, p]) => [n, p.default]));
  let text: string;
  try {
    text = typeof apply.wgsl === 'function' ? apply.wgsl(defaults) : apply.wgsl;
  } catch (e) {
    bad('apply.wgsl', `throws for params ${JSON.stringify(defaults)}: ${e instanceof Error ? e.message : String(e)}`);
    return out;
  }
  const problem = wgslProblem(text);
  if (problem)
    bad(
      'apply.wgsl',
      problem,
      'write only fn op_apply(lane: u32, lanes: u32) (and helpers): read op_a, op_b, write op_out; the kernel declares the bindings and the entry points',
    );
  return out;
}

/** What an operator's WGSL must (not) declare, read from its text; the compiler checks the rest at prepare. */
function wgslProblem(text: string): string | undefined {
  if (typeof text !== 'string') return `gives ${typeof text}, not WGSL text`;
  if (!/\bfn\s+op_apply\s*\(/.test(text)) return 'declares no fn op_apply(lane: u32, lanes: u32)';
  const bindings = wgslBindings(text);
  if (bindings.length)
    return `declares a binding ("${bindings[0].name}", line ${bindings[0].line}); the kernel binds its ports itself (context ports by their names)`;
  if (/@compute\b/.test(text)) return 'declares an entry point (@compute); the kernel generates them per mode';
  return undefined;
}

/** A binary spec (from binaryKernelSpec) joined to the operator's applications: what the built-ins use. */
export function binaryKernel(spec: KernelSpec, apply: BinaryApply): Kernel {
  const op = binaryOperatorOf(spec);
  if (!op) throw new KernelError(spec.id, "is not a binary operator's spec (make it with binaryKernelSpec)");
  const defaults: Params = Object.fromEntries(Object.entries(spec.params).map(([n, p]) => [n, p.default]));
  const shown: Record<string, string> = {};
  for (const mode of ['apply', 'scan', 'reduce', 'propagate', 'exclusive'] as const) {
    if (mode === 'exclusive' && !op.identity) continue;
    const p = { ...defaults, mode };
    shown[mode] = moduleSource(spec.id, mode, p, op, portsFor(spec, p), apply);
  }
  return { ...spec, cpu: cpuTwin(spec.id, op, apply), gpu: gpuImplementation(spec, op, apply, shown) };
}

// ---- ranges ----

/** Why an application is refused: its ranges are not adjacent. Names the mode, the element and both ranges (CPU and GPU say the same). */
export function rangeViolation(mode: string, port: string, index: number, left: [number, number], right: [number, number]): string {
  return `mode "${mode}", element ${index} of "${port}": [${left[0]}, ${left[1]}] (+) [${right[0]}, ${right[1]}] is refused: the ranges are not adjacent (left.hi + 1 must equal right.lo)`;
}

/** Why an application fails on an f32 operator: its result holds NaN or an infinity. Names the mode, the element and both ranges (CPU and GPU say the same). */
export function nonFiniteResult(mode: string, port: string, index: number, left: [number, number], right: [number, number]): string {
  return `mode "${mode}", element ${index} of "${port}": [${left[0]}, ${left[1]}] (+) [${right[0]}, ${right[1]}] gave a non-finite result (NaN or an infinity in its f32 payload)`;
}

/** An f32 bit pattern whose exponent is all ones: NaN or an infinity. */
const nonFinite = (w: number) => (w & 0x7f800000) === 0x7f800000;

const isEmpty = (lo: number, hi: number) => lo > hi;

// ---- the CPU twin ----

const words32 = (v: ArrayBufferView | undefined, need: number, id: string, port: string): Uint32Array => {
  if (!v) throw new KernelError(id, `input "${port}" is missing`);
  const u = new Uint32Array(v.buffer, v.byteOffset, Math.floor(v.byteLength / 4));
  if (u.length < need) throw new KernelError(id, `port "${port}" holds ${u.length} words; ${need} expected`);
  return u;
};

function cpuTwin(id: string, op: BinaryOperatorData, apply: BinaryApply): (f: CpuFiring) => FiringReport | void {
  return ({ params, inputs, outputs }) => {
    const mode = String(params.mode) as BinaryMode;
    const m = Number(params.count);
    const W = op.words(params);
    const E = 2 + W;
    if (mode === 'exclusive' && !op.identity)
      throw new KernelError(id, `param mode: operator "${id}" declares no identity, so it cannot give an exclusive scan`);
    const context: Record<string, ArrayBufferView> = {};
    for (const p of op.context) {
      const v = inputs[p.name];
      if (!v) throw new KernelError(id, `context input "${p.name}" is missing`);
      context[p.name] = v;
    }
    const a = new Uint32Array(W);
    const b = new Uint32Array(W);
    const res = new Uint32Array(W);
    const counters = apply.counters ?? [];
    const sums: Record<string, number> = Object.fromEntries(counters.map((c) => [c, 0]));
    const count = (c: string, v: number) => {
      if (!(c in sums)) throw new KernelError(id, `counts "${c}", which is not one of its counters (${counters.join(', ') || 'none'})`);
      sums[c] += v;
    };
    const report = (): FiringReport | void => (counters.length ? { ok: true, values: { ...sums } } : undefined);
    /** into = left (+) right (into may be left); `port`/`index` name the right operand for a refusal. */
    const combine = (left: Uint32Array, right: Uint32Array, into: Uint32Array, port: string, index: number) => {
      const [llo, lhi, rlo, rhi] = [left[0], left[1], right[0], right[1]];
      if (isEmpty(rlo, rhi)) {
        if (into !== left) into.set(left);
        return;
      }
      if (isEmpty(llo, lhi)) return into.set(right);
      // u32 arithmetic, as the WGSL: hi = 2^32 - 1 is adjacent to nothing.
      if ((lhi + 1) >>> 0 !== rlo || lhi === 0xffffffff) throw new KernelError(id, rangeViolation(mode, port, index, [llo, lhi], [rlo, rhi]));
      a.set(left.subarray(2, E));
      b.set(right.subarray(2, E));
      res.fill(0);
      apply.cpu(a, b, res, params, context, { left: [llo, lhi], right: [rlo, rhi], count });
      if (op.finite && res.some(nonFinite)) throw new KernelError(id, nonFiniteResult(mode, port, index, [llo, lhi], [rlo, rhi]));
      into[0] = llo;
      into[1] = rhi;
      into.set(res, 2);
    };
    const el = (u: Uint32Array, j: number) => u.subarray(j * E, (j + 1) * E);
    const out = (name: string, n: number) => words32(outputs[name], n * E, id, name);
    if (mode === 'apply') {
      combine(words32(inputs.a, E, id, 'a'), words32(inputs.b, E, id, 'b'), el(out('out', 1), 0), 'b', 0);
      return report();
    }
    if (mode === 'propagate') {
      const prefix = words32(inputs.prefix, E, id, 'prefix').subarray(0, E);
      const block = words32(inputs.block, m * E, id, 'block');
      const o = out('out', m);
      for (let j = 0; j < m; j++) combine(prefix, el(block, j), el(o, j), 'block', j);
      return report();
    }
    // scan, reduce, exclusive: one running element, from the symbolic identity.
    const input = words32(inputs.in, m * E, id, 'in');
    const acc = new Uint32Array(E);
    acc[0] = EMPTY_LO;
    acc[1] = EMPTY_HI;
    if (mode === 'exclusive') acc.set(op.identity!(params), 2);
    const o = mode === 'reduce' ? undefined : out('out', m);
    for (let j = 0; j < m; j++) {
      if (mode === 'exclusive') el(o!, j).set(acc);
      combine(acc, el(input, j), acc, 'in', j);
      if (mode === 'scan') el(o!, j).set(acc);
    }
    out('total', 1).set(acc);
    return report();
  };
}

// ---- WGSL ----

const LANES = 64;

/** WGSL array element of a context port. */
function wgslElement(port: PortSpec, params: Params): string {
  const e = port.type(params).element;
  return e === 'f32' ? 'f32' : e === 'i32' ? 'i32' : 'u32';
}

/**
 * The generated module of one mode: the ports bound in order (mode inputs as pl_<port>,
 * context ports by name, outputs as pl_<port>), then `pl_status` (the range-violation record:
 * flag, element, left lo/hi, right lo/hi, a propagate's smallest bad element), the operator's
 * function, and the entry point(s). One workgroup of 64 lanes walks a block left to right
 * (scan, reduce, exclusive, apply); propagate runs a workgroup per element, then `fetch` writes
 * the first refused element's ranges.
 */
function moduleSource(
  id: string,
  mode: BinaryMode,
  params: Params,
  op: BinaryOperatorData,
  ports: { inputs: PortSpec[]; outputs: PortSpec[] },
  apply: BinaryApply,
): string {
  const W = op.words(params);
  const m = mode === 'apply' ? 1 : Number(params.count);
  const N = Math.max(W, 1);
  const chunk = Math.min(m, apply.dispatchElements ?? DISPATCH_ELEMENTS);
  const contextNames = new Set(op.context.map((p) => p.name));
  const lines = ports.inputs.map((p, i) =>
    contextNames.has(p.name)
      ? `@group(0) @binding(${i}) var<storage, read> ${p.name}: array<${wgslElement(p, params)}>;`
      : `@group(0) @binding(${i}) var<storage, read> pl_${p.name}: array<u32>;`,
  );
  ports.outputs.forEach((p, i) => lines.push(`@group(0) @binding(${ports.inputs.length + i}) var<storage, read_write> pl_${p.name}: array<u32>;`));
  const atomic = mode === 'propagate';
  const K = apply.counters?.length ?? 0;
  lines.push(
    `@group(0) @binding(${ports.inputs.length + ports.outputs.length}) var<storage, read_write> pl_status: array<${atomic ? 'atomic<u32>' : 'u32'}, ${8 + K}>;`,
  );
  const text = typeof apply.wgsl === 'function' ? apply.wgsl(params) : apply.wgsl;
  const problem = wgslProblem(text);
  if (problem) throw new KernelError(id, `apply.wgsl for params ${JSON.stringify(params)}: ${problem}`);
  const identity =
    mode === 'exclusive'
      ? `var<private> pl_id: array<u32, ${N}> = array<u32, ${N}>(${(W ? op.identity!(params) : [0]).map((x) => `${x >>> 0}u`).join(', ')});`
      : '';
  const head = /* wgsl */ `// ${id}, mode ${mode}: generated around the operator's op_apply.
const OP_W: u32 = ${W}u;
const PL_E: u32 = ${W + 2}u;
const PL_M: u32 = ${m}u;
const PL_LANES: u32 = ${LANES}u;
var<workgroup> op_a: array<u32, ${N}>;
var<workgroup> op_b: array<u32, ${N}>;
var<workgroup> op_out: array<u32, ${N}>;
var<workgroup> pl_acc: array<u32, ${W + 2}>;
var<workgroup> pl_case: u32;
var<workgroup> op_range: vec4<u32>;
var<workgroup> pl_start: u32;
var<workgroup> pl_two: u32;
var<workgroup> pl_cut: u32;
${identity}
${lines.join('\n')}

// Counter i (of the operator's counters) += v; call from one lane. Cleared before each firing.
fn op_count(i: u32, v: u32) {
  if (i < ${K}u) { ${atomic ? 'atomicAdd(&pl_status[8u + i], v);' : 'pl_status[8u + i] += v;'} }
}

${text}

// Whether the device's loop budget ran out (llvmpipe ends every loop of an invocation after
// 65535 iterations in all, silently): each lane runs a loop of pl_two (2, set at run time)
// iterations; one that ran fewer means the loops before it may have ended early too.
fn pl_spent() -> bool {
  var k = 0u;
  for (var i = 0u; i < pl_two; i++) { k++; }
  if (k != pl_two) { pl_cut = 1u; }
  return workgroupUniformLoad(&pl_cut) != 0u;
}

// 0: apply; 1: the left is empty (take the right); 2: the right is empty (keep the left); 3: refused.
fn pl_decide(llo: u32, lhi: u32, rlo: u32, rhi: u32) -> u32 {
  if (rlo > rhi) { return 2u; }
  if (llo > lhi) { return 1u; }
  if (lhi == 0xffffffffu || lhi + 1u != rlo) { return 3u; }
  return 0u;
}
`;
  const record = atomic
    ? ''
    : `
// The first refusal is kept (the flag is never cleared): a run fails at its first.
fn pl_refuse(j: u32, llo: u32, lhi: u32, rlo: u32, rhi: u32) {
  if (pl_status[0] != 0u) { return; }
  pl_status[0] = 1u; pl_status[1] = j; pl_status[2] = llo; pl_status[3] = lhi; pl_status[4] = rlo; pl_status[5] = rhi;
}
`;
  // f32 operators: a result word whose exponent is all ones (NaN, an infinity) is recorded as flag 2
  // with the operands' ranges (op_range); propagate's workgroups race, so the first to swap the flag wins.
  const finite = !op.finite
    ? ''
    : `
fn pl_non_finite() -> bool {
  for (var i = 0u; i < OP_W; i++) { if ((op_out[i] & 0x7f800000u) == 0x7f800000u) { return true; } }
  return false;
}
fn pl_refuse_non_finite(j: u32) {
${
  atomic
    ? `  loop {
    let r = atomicCompareExchangeWeak(&pl_status[0], 0u, 2u);
    if (r.exchanged) { atomicStore(&pl_status[1], j); atomicStore(&pl_status[2], op_range.x); atomicStore(&pl_status[3], op_range.y); atomicStore(&pl_status[4], op_range.z); atomicStore(&pl_status[5], op_range.w); return; }
    if (r.old_value != 0u) { return; }
  }`
    : `  if (pl_status[0] != 0u) { return; }
  pl_status[0] = 2u; pl_status[1] = j; pl_status[2] = op_range.x; pl_status[3] = op_range.y; pl_status[4] = op_range.z; pl_status[5] = op_range.w;`
}
}
`;
  const check = (j: string) =>
    !op.finite
      ? ''
      : `
      if (lane == 0u && pl_non_finite()) { pl_refuse_non_finite(${j}); pl_case = 3u; }
      if (workgroupUniformLoad(&pl_case) == 3u) { return; }`;
  // One application: operands' payloads copied into workgroup memory by lanes, op_apply, result copied to dest at db.
  const applyInto = (left: string, lb: string, right: string, rb: string, dest: string, db: string, lo: string, hi: string, j: string) => `
      for (var i = lane; i < OP_W; i += PL_LANES) { op_a[i] = ${left}[${lb} + 2u + i]; op_b[i] = ${right}[${rb} + 2u + i]; op_out[i] = 0u; }
      if (lane == 0u) { op_range = vec4<u32>(${left}[${lb}], ${left}[${lb} + 1u], ${right}[${rb}], ${right}[${rb} + 1u]); }
      workgroupBarrier();
      op_apply(lane, PL_LANES);
      workgroupBarrier();${check(j)}
      for (var i = lane; i < OP_W; i += PL_LANES) { ${dest}[${db} + 2u + i] = op_out[i]; }
      if (lane == 0u) { ${dest}[${db}] = ${lo}; ${dest}[${db} + 1u] = ${hi}; }`;
  const copy = (from: string, fb: string, to: string, tb: string) => `for (var i = lane; i < PL_E; i += PL_LANES) { ${to}[${tb} + i] = ${from}[${fb} + i]; }`;
  if (mode === 'apply') {
    return `${head}${record}${finite}
@compute @workgroup_size(${LANES})
fn apply(@builtin(local_invocation_index) lane: u32) {
  if (lane == 0u) {
    let c = pl_decide(pl_a[0], pl_a[1], pl_b[0], pl_b[1]);
    if (c == 3u) { pl_refuse(0u, pl_a[0], pl_a[1], pl_b[0], pl_b[1]); }
    pl_case = c;
    pl_two = 2u;
    pl_cut = 0u;
  }
  let c = workgroupUniformLoad(&pl_case);
  if (c == 3u) { return; }
  if (c == 0u) {${applyInto('pl_a', '0u', 'pl_b', '0u', 'pl_out', '0u', 'pl_a[0]', 'pl_b[1]', '0u')}
  } else if (c == 1u) {
    ${copy('pl_b', '0u', 'pl_out', '0u')}
  } else {
    ${copy('pl_a', '0u', 'pl_out', '0u')}
  }
  if (pl_spent()) { return; }
  if (lane == 0u) { pl_status[7] = 1u; }
}
`;
  }
  if (mode === 'propagate') {
    return `${head}${finite}
@compute @workgroup_size(${LANES})
fn propagate(@builtin(local_invocation_index) lane: u32, @builtin(workgroup_id) wg: vec3<u32>) {
  let j = wg.x;
  let base = j * PL_E;
  if (lane == 0u) {
    let c = pl_decide(pl_prefix[0], pl_prefix[1], pl_block[base], pl_block[base + 1u]);
    // The smallest refused element wins; fetch records its ranges.
    if (c == 3u) { atomicMax(&pl_status[6], PL_M - j); }
    pl_case = c;
    pl_two = 2u;
    pl_cut = 0u;
  }
  let c = workgroupUniformLoad(&pl_case);
  if (c == 3u) { return; }
  if (c == 0u) {${applyInto('pl_prefix', '0u', 'pl_block', 'base', 'pl_out', 'base', 'pl_prefix[0]', 'pl_block[base + 1u]', 'j')}
  } else if (c == 1u) {
    ${copy('pl_block', 'base', 'pl_out', 'base')}
  } else {
    ${copy('pl_prefix', '0u', 'pl_out', 'base')}
  }
  if (pl_spent()) { return; }
  if (lane == 0u) { atomicAdd(&pl_status[7], 1u); }
}

@compute @workgroup_size(1)
fn fetch() {
  let r = atomicLoad(&pl_status[6]);
  if (r == 0u || atomicLoad(&pl_status[0]) != 0u) { return; }
  let j = PL_M - r;
  atomicStore(&pl_status[0], 1u);
  atomicStore(&pl_status[1], j);
  atomicStore(&pl_status[2], pl_prefix[0]);
  atomicStore(&pl_status[3], pl_prefix[1]);
  atomicStore(&pl_status[4], pl_block[j * PL_E]);
  atomicStore(&pl_status[5], pl_block[j * PL_E + 1u]);
}
`;
  }
  // scan, reduce, exclusive: one workgroup walks the block; pl_acc is the running element,
  // from the symbolic identity (EMPTY, payload: the identity for exclusive, else zeros). Each
  // dispatch walks up to PL_CHUNK elements from word 7 (elements done), keeping the running
  // element in pl_total in between; a refusal, or a dispatch whose loop budget ran out (word 6),
  // ends the walk.
  return `${head}${record}${finite}
const PL_CHUNK: u32 = ${chunk}u;
@compute @workgroup_size(${LANES})
fn ${mode}(@builtin(local_invocation_index) lane: u32) {
  if (lane == 0u) {
    pl_start = select(pl_status[7], PL_M, pl_status[0] != 0u || pl_status[6] != 0u);
    pl_two = 2u;
    pl_cut = 0u;
  }
  let start = workgroupUniformLoad(&pl_start);
  if (start >= PL_M) { return; }
  if (start == 0u) {
    if (lane == 0u) { pl_acc[0] = ${EMPTY_LO}u; pl_acc[1] = ${EMPTY_HI}u; }
    for (var i = lane; i < OP_W; i += PL_LANES) { pl_acc[2u + i] = ${mode === 'exclusive' ? 'pl_id[i]' : '0u'}; }
  } else {
    ${copy('pl_total', '0u', 'pl_acc', '0u')}
  }
  workgroupBarrier();
  for (var j = start; j < min(start + PL_CHUNK, PL_M); j++) {
    let base = j * PL_E;
    ${mode === 'exclusive' ? copy('pl_acc', '0u', 'pl_out', 'base') : ''}
    if (lane == 0u) {
      let c = pl_decide(pl_acc[0], pl_acc[1], pl_in[base], pl_in[base + 1u]);
      if (c == 3u) { pl_refuse(j, pl_acc[0], pl_acc[1], pl_in[base], pl_in[base + 1u]); }
      pl_case = c;
    }
    let c = workgroupUniformLoad(&pl_case);
    if (c == 3u) { return; }
    if (c == 0u) {${applyInto('pl_acc', '0u', 'pl_in', 'base', 'pl_acc', '0u', 'pl_acc[0]', 'pl_in[base + 1u]', 'j')}
    } else if (c == 1u) {
      ${copy('pl_in', 'base', 'pl_acc', '0u')}
    }
    workgroupBarrier();
    if (pl_spent()) {
      if (lane == 0u) { pl_status[6] = 1u; }
      return;
    }
    ${mode === 'scan' ? copy('pl_acc', '0u', 'pl_out', 'base') : ''}
    if (lane == 0u) { pl_status[7] += 1u; }
  }
  ${copy('pl_acc', '0u', 'pl_total', '0u')}
}
`;
}

/** The dispatches of one firing: one workgroup walking the block in chunks of `chunk` elements, or (propagate) one per element, then the one-invocation fetch. */
function dispatches(mode: BinaryMode, m: number, chunk: number): DispatchInfo[] {
  if (mode === 'propagate')
    return [
      { module: 'propagate', workgroups: [m, 1, 1] },
      { module: 'propagate', workgroups: [1, 1, 1] },
    ];
  if (mode === 'apply') return [{ module: mode, workgroups: [1, 1, 1] }];
  return Array.from({ length: Math.ceil(m / chunk) }, () => ({ module: mode, workgroups: [1, 1, 1] as [number, number, number] }));
}

function gpuImplementation(spec: KernelSpec, op: BinaryOperatorData, apply: BinaryApply, shown: Record<string, string>): GpuImplementation {
  const id = spec.id;
  return {
    wgsl: shown,
    dispatches: (p) => dispatches(String(p.mode) as BinaryMode, Number(p.count), apply.dispatchElements ?? DISPATCH_ELEMENTS),
    async prepare(device: GPUDevice, params: Params): Promise<GpuExecutor> {
      const mode = String(params.mode) as BinaryMode;
      let ports: { inputs: PortSpec[]; outputs: PortSpec[] };
      try {
        ports = portsFor(spec, params);
      } catch (e) {
        throw new KernelError(id, e instanceof Error ? e.message : String(e));
      }
      const W = op.words(params);
      const m = Number(params.count);
      const E = W + 2;
      const block = (mode === 'apply' ? 1 : m) * E * 4;
      if (block > device.limits.maxStorageBufferBindingSize)
        throw new KernelError(
          id,
          `a block of ${m} elements of ${E} words is ${block} bytes; this device binds at most ${device.limits.maxStorageBufferBindingSize} (use fewer elements per block: more workers)`,
        );
      const shared = (4 * W + 13) * 4;
      if (shared > device.limits.maxComputeWorkgroupStorageSize)
        throw new KernelError(
          id,
          `${W} payload words need ${shared} bytes of workgroup memory; this device has ${device.limits.maxComputeWorkgroupStorageSize}`,
        );
      const source = moduleSource(id, mode, params, op, ports, apply);
      const entries: GPUBindGroupLayoutEntry[] = [
        ...ports.inputs.map((_, i) => ({ binding: i, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' as const } })),
        ...ports.outputs.map((_, i) => ({ binding: ports.inputs.length + i, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' as const } })),
        { binding: ports.inputs.length + ports.outputs.length, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' as const } },
      ];
      const layout = device.createPipelineLayout({
        bindGroupLayouts: [device.createBindGroupLayout({ entries, label: `${id}/layout` })],
        label: `${id}/layout`,
      });
      const main = await createPipeline(device, id, mode, source, mode, layout);
      const fetch = mode === 'propagate' ? await createPipeline(device, id, mode, source, 'fetch', layout) : undefined;
      // Zeroed at creation and never cleared: the first refusal stays (a run stops at it).
      // Counters follow the 8 status words; they, word 7 (elements done) and word 6 (a walk's
      // dispatch ran out of loop budget; propagate: the smallest refused element, fetched in
      // the same firing) are cleared before each firing, the refusal record (words 0 .. 5) never.
      const counters = apply.counters ?? [];
      const size = 32 + 4 * counters.length;
      const status = device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST, label: `${id}/status` });
      const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: `${id}/status-read` });
      const plan = dispatches(mode, m, apply.dispatchElements ?? DISPATCH_ELEMENTS);
      // Propagate: its dispatch, then fetch's; other modes: every dispatch is main's (a walk's chunks).
      const passes: [GPUComputePipeline, DispatchInfo[]][] = fetch
        ? [
            [main, [plan[0]]],
            [fetch, [plan[1]]],
          ]
        : [[main, plan]];
      return {
        encode(encoder, firing) {
          const buffers = [...ports.inputs.map((p) => firing.inputs[p.name]), ...ports.outputs.map((p) => firing.outputs[p.name]), status];
          encoder.clearBuffer(status, 24, 8 + 4 * counters.length);
          for (const [pipeline, list] of passes) {
            const pass = encoder.beginComputePass({ label: `${id}/${mode}` });
            pass.setPipeline(pipeline);
            pass.setBindGroup(0, bindGroup(device, pipeline, buffers));
            for (const d of list) pass.dispatchWorkgroups(...d.workgroups);
            pass.end();
          }
          encoder.copyBufferToBuffer(status, 0, staging, 0, size);
        },
        async report() {
          await staging.mapAsync(GPUMapMode.READ);
          const s = new Uint32Array(staging.getMappedRange().slice(0));
          staging.unmap();
          const sums = Object.fromEntries(counters.map((c, i) => [c, s[8 + i]]));
          const port = mode === 'apply' ? 'b' : mode === 'propagate' ? 'block' : 'in';
          if (s[0] === 0) {
            // No refusal, but not every element was walked (scan modes) or not every workgroup
            // reached its end (propagate): the device cut the dispatch short.
            const expected = mode === 'apply' ? 1 : m;
            if (s[7] === expected) return counters.length ? { ok: true, values: sums } : { ok: true };
            return {
              ok: false,
              message: `kernel "${id}": mode "${mode}": the dispatch stopped before its end (${s[7]} of ${expected} elements done; the device cut it short: llvmpipe ends an invocation's loops after 65535 iterations in all, other devices may have a watchdog): make one application cheaper (fewer iterations), or give a block fewer elements (more workers)`,
              values: { finished: s[7], expected, ...sums },
            };
          }
          if (s[0] === 2)
            return {
              ok: false,
              message: `kernel "${id}": ${nonFiniteResult(mode, port, s[1], [s[2], s[3]], [s[4], s[5]])}`,
              values: { element: s[1], left: [s[2], s[3]], right: [s[4], s[5]], ...sums },
            };
          return {
            ok: false,
            message: `kernel "${id}": ${rangeViolation(mode, port, s[1], [s[2], s[3]], [s[4], s[5]])}`,
            values: { element: s[1], left: [s[2], s[3]], right: [s[4], s[5]], ...sums },
          };
        },
        destroy() {
          status.destroy();
          staging.destroy();
        },
      };
    },
  };
}

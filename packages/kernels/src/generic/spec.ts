import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, Params, PortSpec } from '../types.js';

// `generic.work`: a stand-in for a kernel not written yet. Its ports, their sizes and its cost
// per firing are params, so a pipeline can be drawn, compiled, predicted and run (its firings
// padded to the cost hint's time by device emulation) before its real kernels exist.

export const GENERIC_WORK = 'generic.work';
/** The combine of a split node (`tasks: K`): its K shares' outputs added in share order. */
export const GENERIC_SUM = 'generic.sum';

/** Most inputs `generic.sum` adds (the most shares a node's `tasks` may ask). */
export const MAX_SUM_INPUTS = 4096;
/** Most elements of what `generic.sum` adds (1 GiB of f32). */
const MAX_SUM_ELEMENTS = 1 << 28;

/** `generic.sum`'s extents from its `shape` param ("16,16,16"); throws naming the param and the fix. */
export function sumShape(p: Params): number[] {
  const text = String(p.shape ?? '').trim();
  const parts = text.split(',').map((x) => x.trim());
  if (!text || parts.length > 8 || !parts.every((x) => /^[1-9]\d{0,9}$/.test(x)))
    throw new Error(`param shape: "${text}" is not a list of up to 8 positive extents, e.g. "16,16,16"`);
  const shape = parts.map(Number);
  const elements = shape.reduce((a, b) => a * b, 1);
  if (elements > MAX_SUM_ELEMENTS) throw new Error(`param shape: "${text}" has ${elements} elements, more than ${MAX_SUM_ELEMENTS}`);
  return shape;
}
const sumType = (p: Params): DataType => ({ kind: String(p.kind ?? '') || 'vector', element: 'f32', shape: sumShape(p) });

/** Words of one port: `bytes` rounded up to whole u32 words (GPU copies move 4-byte words). */
const words = (p: Params) => Math.ceil(Number(p.bytes) / 4);
const bytesType = (p: Params): DataType => ({ kind: 'bytes', element: 'u32', shape: [words(p)] });

/** Most bytes one declared port may have (the `bytes` param's own maximum). */
const MAX_PORT_BYTES = 1 << 30;
/** Most ports one side may declare (the `inputs`/`outputs` params' own maximum). */
const MAX_DECLARED_PORTS = 32;

/**
 * Ports of their own sizes, from the `ports` param: `in: 4096, side: 64 -> out: 4096` (inputs,
 * `->`, outputs; bytes per firing of each port, rounded up to whole u32 words). Empty: the
 * variadic ports `in0..`, `out0..` of `bytes` each. Throws naming the part that is wrong.
 */
export function genericPorts(p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  const text = String(p.ports ?? '').trim();
  if (!text) {
    const count = (name: string) => Math.max(0, Math.min(MAX_DECLARED_PORTS, Math.floor(Number(p[name]) || 0)));
    const list = (prefix: string, n: number) => Array.from({ length: n }, (_, i): PortSpec => ({ name: `${prefix}${i}`, type: bytesType }));
    return { inputs: list('in', count('inputs')), outputs: list('out', count('outputs')) };
  }
  const sides = text.split('->');
  if (sides.length !== 2) throw new Error(`param ports: "${text}" needs one "->" between inputs and outputs, e.g. "in: 4096 -> out: 1024, side: 64"`);
  const names = new Set<string>();
  const side = (list: string): PortSpec[] => {
    const decls = list
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    if (decls.length > MAX_DECLARED_PORTS) throw new Error(`param ports: ${decls.length} ports on one side, more than ${MAX_DECLARED_PORTS}`);
    return decls.map((decl) => {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(\d+)$/.exec(decl);
      if (!m) throw new Error(`param ports: "${decl}" is not "name: bytes" (e.g. "in: 4096")`);
      if (names.has(m[1])) throw new Error(`param ports: two ports are named "${m[1]}"`);
      names.add(m[1]);
      const bytes = Number(m[2]);
      if (bytes < 1 || bytes > MAX_PORT_BYTES) throw new Error(`param ports: "${decl}": a port has 1 to ${MAX_PORT_BYTES} bytes`);
      const type: DataType = { kind: 'bytes', element: 'u32', shape: [Math.ceil(bytes / 4)] };
      return { name: m[1], type: () => type };
    });
  };
  return { inputs: side(sides[0]), outputs: side(sides[1]) };
}

/** Bytes one firing moves: every port's words. */
const firingBytes = (p: Params) => {
  const { inputs, outputs } = genericPorts(p);
  return [...inputs, ...outputs].reduce((sum, port) => sum + port.type(p).shape[0] * 4, 0);
};

export const genericSpecs: KernelSpec[] = builtinSpecs([
  {
    id: GENERIC_WORK,
    title: 'Generic work',
    category: 'Prototyping',
    description:
      'Stands in for a kernel not written yet: `inputs` inputs and `outputs` outputs of `bytes` bytes each, costing `flops` per firing ' +
      '(or the ports declared in `ports`, each of its own size: `in: 4096 -> out: 1024, side: 64`). ' +
      "Its firings write zeros; the compiler, the predictor and runs (each firing padded to its cost hint's time on its PE) treat it as real.",
    params: {
      inputs: { type: 'int', default: 1, min: 0, max: 32, unit: 'ports', description: 'Number of input ports (in0, in1, ...)' },
      outputs: { type: 'int', default: 1, min: 0, max: 32, unit: 'ports', description: 'Number of output ports (out0, out1, ...)' },
      bytes: { type: 'int', default: 4096, min: 4, max: 1 << 30, unit: 'bytes', description: 'Bytes of every port (rounded up to a multiple of 4)' },
      flops: {
        type: 'float',
        default: 1e6,
        min: 0,
        unit: 'flop',
        description: 'Arithmetic work of one firing (the cost hint the predictor and emulated devices use)',
      },
      ports: {
        type: 'string',
        default: '',
        description:
          'Ports of their own sizes instead of inputs/outputs/bytes: "in: 4096, side: 64 -> out: 1024" (bytes per firing of each port; empty: in0.., out0.. of `bytes` each)',
      },
    },
    inputs: [{ name: 'in', repeat: 'inputs', description: 'Any data of `bytes` bytes', type: bytesType }],
    outputs: [{ name: 'out', repeat: 'outputs', description: 'Zeros, `bytes` bytes', type: bytesType }],
    ports: genericPorts,
    cost: (p) => ({ flops: Number(p.flops), bytes: firingBytes(p) }),
  },
  {
    id: GENERIC_SUM,
    title: 'Sum',
    category: 'Prototyping',
    description:
      'The combine of a node with `tasks: K` (lowering adds it): out = in0 + in1 + ... + in(count-1), element by element in input order, ' +
      "each addition rounded to f32, the same on CPU and GPU PEs, so a split node's result does not depend on where its shares ran.",
    params: {
      count: {
        type: 'int',
        default: 2,
        min: 1,
        max: MAX_SUM_INPUTS,
        unit: 'inputs',
        description: 'Inputs added (in0, in1, ...): the shares of the split node',
      },
      kind: { type: 'string', default: 'vector', description: 'The data kind of the inputs and the output (e.g. volume)' },
      shape: { type: 'string', default: '1024', description: 'Extents of the inputs and the output, outermost first (e.g. "16,16,16")' },
    },
    inputs: [{ name: 'in', repeat: 'count', description: "One share's output", type: sumType }],
    outputs: [{ name: 'sum', description: "The inputs' sum, in input order", type: sumType }],
    cost: (p) => {
      const n = sumShape(p).reduce((a, b) => a * b, 1);
      const k = Number(p.count);
      return { flops: Math.max(0, k - 1) * n, bytes: (k + 1) * n * 4 };
    },
  },
]);

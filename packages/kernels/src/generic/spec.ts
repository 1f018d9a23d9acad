import { builtinSpecs } from '../definition.js';
import type { DataType, KernelSpec, Params } from '../types.js';

// `generic.work`: a stand-in for a kernel not written yet. Its ports, their sizes and its cost
// per firing are params, so a pipeline can be drawn, compiled, predicted and run (its firings
// padded to the cost hint's time by device emulation) before its real kernels exist.

export const GENERIC_WORK = 'generic.work';

/** Words of one port: `bytes` rounded up to whole u32 words (GPU copies move 4-byte words). */
const words = (p: Params) => Math.ceil(Number(p.bytes) / 4);
const bytesType = (p: Params): DataType => ({ kind: 'bytes', element: 'u32', shape: [words(p)] });

export const genericSpecs: KernelSpec[] = builtinSpecs([
  {
    id: GENERIC_WORK,
    title: 'Generic work',
    category: 'Prototyping',
    description:
      'Stands in for a kernel not written yet: `inputs` inputs and `outputs` outputs of `bytes` bytes each, costing `flops` per firing. ' +
      'Its firings write zeros; the compiler, the predictor and runs (each firing padded to its cost hint\'s time on its PE) treat it as real.',
    params: {
      inputs: { type: 'int', default: 1, min: 0, max: 32, unit: 'ports', description: 'Number of input ports (in0, in1, ...)' },
      outputs: { type: 'int', default: 1, min: 0, max: 32, unit: 'ports', description: 'Number of output ports (out0, out1, ...)' },
      bytes: { type: 'int', default: 4096, min: 4, max: 1 << 30, unit: 'bytes', description: 'Bytes of every port (rounded up to a multiple of 4)' },
      flops: { type: 'float', default: 1e6, min: 0, unit: 'flop', description: 'Arithmetic work of one firing (the cost hint the predictor and emulated devices use)' },
    },
    inputs: [{ name: 'in', repeat: 'inputs', description: 'Any data of `bytes` bytes', type: bytesType }],
    outputs: [{ name: 'out', repeat: 'outputs', description: 'Zeros, `bytes` bytes', type: bytesType }],
    cost: (p) => ({ flops: Number(p.flops), bytes: words(p) * 4 * (Number(p.inputs) + Number(p.outputs)) }),
  },
]);

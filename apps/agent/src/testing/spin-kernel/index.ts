import { defineKernel, type Params } from '@pipeloom/kernels';

// A kernel package for the task bag's time-limit test (taskbag/kernel-timeout.test.ts):
// `test.spin` copies its input, and with `forever` set its CPU twin never returns (a careless
// kernel: the agent's watchdog must stop its thread and keep the agent usable).

const N = (p: Params) => Number(p.length);

export const spin = defineKernel({
  id: 'test.spin',
  version: '1.0.0',
  description: 'Copies its input; with `forever`, its CPU twin loops and never returns.',
  params: {
    length: { type: 'int', default: 64, min: 1, max: 4096, description: 'elements' },
    forever: { type: 'bool', default: false, description: 'loop forever instead of copying' },
  },
  inputs: [{ name: 'in', type: (p) => ({ kind: 'vector', element: 'f32', shape: [N(p)] }) }],
  outputs: [{ name: 'out', type: (p) => ({ kind: 'vector', element: 'f32', shape: [N(p)] }) }],
  cost: (p) => ({ flops: 0, bytes: 8 * N(p) }),
  cpu: ({ params, inputs, outputs }) => {
    // Writes as it loops, so no engine can drop the loop as dead code.
    if (params.forever) for (let i = 0; ; i = (i + 1) % N(params)) (outputs.out as Float32Array)[i] += 1;
    (outputs.out as Float32Array).set(inputs.in as Float32Array);
  },
});

export default [spin];

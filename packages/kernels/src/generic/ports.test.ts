import { describe, expect, it } from 'vitest';
import { findKernel, portsFor, withDefaults, type Params } from '../specs.js';
import { GENERIC_WORK, genericPorts } from './spec.js';

const spec = findKernel(GENERIC_WORK)!;
const sizes = (ports: ReturnType<typeof genericPorts>['inputs'], params: Params) => ports.map((p) => [p.name, p.type(params).shape[0] * 4]);

describe('generic.work ports', () => {
  it('without `ports`: inputs in0.. and outputs out0.. of `bytes` each, as before', () => {
    const params = withDefaults(spec, { inputs: 2, outputs: 1, bytes: 64 });
    const ports = portsFor(spec, params);
    expect(sizes(ports.inputs, params)).toEqual([
      ['in0', 64],
      ['in1', 64],
    ]);
    expect(sizes(ports.outputs, params)).toEqual([['out0', 64]]);
    expect(spec.cost(params).bytes).toBe(3 * 64);
  });

  it('with `ports`: named ports of their own sizes, rounded up to whole words; the cost counts them', () => {
    const params = withDefaults(spec, { ports: 'in: 32, cfg: 3 -> out: 8', flops: 10 });
    const ports = portsFor(spec, params);
    expect(sizes(ports.inputs, params)).toEqual([
      ['in', 32],
      ['cfg', 4],
    ]);
    expect(sizes(ports.outputs, params)).toEqual([['out', 8]]);
    expect(spec.cost(params)).toEqual({ flops: 10, bytes: 44 });
  });

  it('a source or a sink leaves one side empty', () => {
    expect(genericPorts({ ports: '-> out: 4' }).inputs).toEqual([]);
    expect(genericPorts({ ports: 'in: 4 ->' }).outputs).toEqual([]);
  });

  it('refuses a declaration it cannot read, naming it', () => {
    expect(() => genericPorts({ ports: 'in: 4' })).toThrow(/needs one "->"/);
    expect(() => genericPorts({ ports: 'in: four -> out: 4' })).toThrow(/"in: four" is not "name: bytes"/);
    expect(() => genericPorts({ ports: 'a: 4 -> a: 4' })).toThrow(/two ports are named "a"/);
    expect(() => genericPorts({ ports: 'a: 0 -> b: 4' })).toThrow(/1 to/);
  });
});

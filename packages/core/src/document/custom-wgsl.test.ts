import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ProjectDocument } from './types.js';
import { validate } from './validate.js';

// P (vector.produce, cpu) -> K (custom.wgsl, gpu) -> C (vector.check, cpu)
const example = (): ProjectDocument => JSON.parse(readFileSync(new URL('../../../../examples/custom-wgsl.json', import.meta.url), 'utf8'));

describe('custom WGSL and GPU-only kernels in validation', () => {
  it('accepts the example: the custom node mapped to a GPU PE', () => {
    expect(validate(example())).toEqual([]);
  });

  it('refuses a GPU-only kernel mapped to a CPU PE, naming the node and the fix', () => {
    const d = example();
    d.mapping.K = 'cpu@h0';
    expect(validate(d)).toEqual([
      expect.objectContaining({
        path: 'mapping.K',
        message: 'node "K" (custom.wgsl) runs on GPU PEs only, but is mapped to the CPU PE cpu@h0',
        hint: 'map it to a GPU PE: gpu0@h0',
        severity: 'error',
      }),
    ]);
  });

  it('refuses an empty WGSL source', () => {
    const d = example();
    d.app.nodes[1].params = { ...d.app.nodes[1].params, source: '  \n' };
    const [diag, ...rest] = validate(d);
    expect(rest).toEqual([]);
    expect(diag).toMatchObject({ path: 'app.nodes[1].params.source', message: 'node "K" (custom.wgsl) has an empty WGSL source', severity: 'error' });
  });
});

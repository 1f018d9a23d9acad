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

  it('takes ports declared in params (any number, each its own type and size) and checks the WGSL binds them in order', () => {
    const d = example();
    // P feeds both inputs; K's second output is unread (allowed), the first goes to C.
    const k = d.app.nodes[1];
    const twoIn = `@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> sum: array<f32>;
@group(0) @binding(3) var<storage, read_write> count: array<u32>;
@group(0) @binding(4) var<uniform> info: vec4<u32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x >= info.x) { return; }
  sum[gid.x] = a[gid.x] + b[gid.x];
  if (gid.x == 0u) { count[0] = info.y; }
}`;
    k.params = { ...k.params, source: twoIn, ports: 'a: f32[65536], b: f32[65536] -> sum: f32[65536], count: u32[1]' };
    d.app.edges = [
      { from: { node: 'P', port: 'out' }, to: { node: 'K', port: 'a' } },
      { from: { node: 'P', port: 'out' }, to: { node: 'K', port: 'b' } },
      { from: { node: 'K', port: 'sum' }, to: { node: 'C', port: 'in' } },
    ];
    expect(validate(d)).toEqual([]);
    // Binding 3 declared read instead of read_write: named with its line and the port it should be.
    k.params = { ...k.params, source: twoIn.replace('@binding(3) var<storage, read_write> count', '@binding(3) var<storage, read> count') };
    expect(validate(d)).toEqual([
      expect.objectContaining({
        path: 'app.nodes[1].params.source',
        message:
          'node "K" (custom.wgsl): its WGSL bindings do not match its ports: binding 3 "count" (line 4) is storage-read, but output "count" needs var<storage, read_write>',
      }),
    ]);
    // A type mismatch on an edge to a declared port is the usual edge diagnostic.
    k.params = { ...k.params, source: twoIn, ports: 'a: f32[65536], b: f32[100] -> sum: f32[65536], count: u32[1]' };
    expect(validate(d).map((x) => x.message)).toEqual(['type mismatch: P.out is vector<f32>[65536] but K.b expects vector<f32>[100]']);
  });

  it('names a ports declaration it cannot read, and the original one-in one-out contract is checked too', () => {
    const d = example();
    d.app.nodes[1].params = { ...d.app.nodes[1].params, ports: 'a f32[4] -> b: f32[4]' };
    expect(validate(d)).toEqual([
      expect.objectContaining({
        path: 'app.nodes[1].params.ports',
        message: 'node "K" (custom.wgsl): param ports: "a f32[4]" is not "name: f32|u32|i32[size]" (size: N or NxM)',
      }),
    ]);
    const e = example();
    e.app.nodes[1].params = { ...e.app.nodes[1].params, source: String(e.app.nodes[1].params!.source).replace('@binding(1)', '@binding(5)') };
    expect(validate(e).map((x) => x.message)).toEqual([
      'node "K" (custom.wgsl): its WGSL bindings do not match its ports: binding 1 (output "out") is missing: declare @group(0) @binding(1) var<storage, read_write>; @group(0) @binding(5) "output" (line 2) matches no declared port (ports bind 0..2 of group 0 in order: input "in", output "out", the uniforms)',
    ]);
  });
});

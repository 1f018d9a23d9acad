import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { checkedJoinDocument } from '../testing/join.js';
import { analyze } from './validate.js';

// P -> I1 (nb_loop 100: +1) -> add.a ; P -> I2 (nb_loop 3: +0) -> add.b ; add -> C, on one host.
const joinDocument = (consume: Record<string, number | string> = {}) =>
  checkedJoinDocument({ width: 8, height: 4, nbLoop2: 3, hosts: 1, iterations: 10, consume });

describe('checkers derive what they expect from the graph upstream', () => {
  it('a join is exact: C after add(I1(P), I2(P)) expects 2 x iteration + 1, in the model and in the fire params agents get', () => {
    const { model } = analyze(joinDocument());
    expect(model!.derived!.get('C')).toEqual({ increments: '', expected_offset: 1, scale: 2 });
    expect(model!.node.get('C' as never)!.params).toMatchObject({ scale: 2, expected_offset: 1, increments: '' });
    const r = compile(joinDocument());
    if (!r.ok) throw new Error('does not compile');
    const at = r.ig.order.indexOf('C' as never);
    expect(r.ig.programs.fire.params[at]).toMatchObject({ scale: 2, expected_offset: 1 });
  });

  it('a param set in the document is the override: that checker is left as written', () => {
    const { model } = analyze(joinDocument({ expected_offset: 5 }));
    expect(model!.derived!.has('C')).toBe(false);
    expect(model!.node.get('C' as never)!.params).toMatchObject({ scale: 1, expected_offset: 5 });
  });

  it('nothing is derived through a kernel that does not say what it holds (custom WGSL)', () => {
    const doc = joinDocument();
    doc.app.nodes = [
      { id: 'P', kernel: 'vector.produce', params: { length: 64 } },
      { id: 'K', kernel: 'custom.wgsl', params: { length: 64 } },
      { id: 'C', kernel: 'vector.check', params: { length: 64 } },
      { id: 'D', kernel: 'vector.check', params: { length: 64 } },
    ];
    doc.app.edges = [
      { from: { node: 'P', port: 'out' }, to: { node: 'K', port: 'in' } },
      { from: { node: 'K', port: 'out' }, to: { node: 'C', port: 'in' } },
      { from: { node: 'P', port: 'out' }, to: { node: 'D', port: 'in' } },
    ];
    doc.mapping = { P: 'cpu@h0', K: 'gpu0@h0', C: 'cpu@h0', D: 'cpu@h0' };
    const { model, diagnostics } = analyze(doc);
    expect(diagnostics).toEqual([]);
    expect([...model!.derived!.keys()]).toEqual(['D']);
  });
});

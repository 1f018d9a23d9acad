import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../document/validate.js';
import { randomDocument, splitJoinDocument } from '../testing/generate.js';
import { type ProjectDocument, SYNC_MODES } from '../document/types.js';
import { compile } from './compile.js';
import { allPrograms } from './decode.js';
import { simulate } from './simulate.js';
import type { ImplementationGraph } from './types.js';

const oneHost: ProjectDocument['arch'] = { hosts: [{ id: 'h0', cpus: 1, gpus: 1 }], pes: [], links: [] };
const twoHosts: ProjectDocument['arch'] = {
  hosts: [
    { id: 'h0', cpus: 1, gpus: 1 },
    { id: 'h1', cpus: 1, gpus: 1 },
  ],
  pes: [],
  links: [],
  network: { kind: 'infiniband', bandwidth: 1e9, latency: 1e-6 },
};

function ig(doc: ProjectDocument, overlap?: boolean): ImplementationGraph {
  const r = compile(doc, { overlap });
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.path}: ${d.message}`).join('\n'));
  return r.ig;
}

const messages = (doc: ProjectDocument) => analyze(doc).diagnostics.map((d) => `${d.path}: ${d.message} (${d.hint})`);

describe('model of a lowered split/join', () => {
  const doc = () => splitJoinDocument({ slices: 8, width: 3, height: 16, arch: oneHost, pe: () => 'cpu@h0' });

  it('lists every part of a joined input in token order, with byte ranges per edge', () => {
    const m = analyze(doc()).model!;
    const check = m.node.get('check' as never)!;
    const parts = Array.from(m.inputs.edge.subarray(m.inputs.start[check.index], m.inputs.start[check.index + 1]));
    expect(parts.map((e) => m.doc.app.edges[e].from.node)).toEqual(Array.from({ length: 8 }, (_, j) => `slice#${j}`));
    const row = 3 * 2 * 4; // two rows of 3 f32 per token
    expect(parts.map((e) => [m.edges.toOffset[e], m.edges.bytes[e]])).toEqual(Array.from({ length: 8 }, (_, j) => [j * row, row]));
    const splits = m.doc.app.edges.map((e, i) => i).filter((i) => m.doc.app.edges[i].from.node === 'frame');
    expect(splits.map((e) => [m.edges.fromOffset[e], m.edges.bytes[e], m.edges.outputBytes[e]])).toEqual(
      Array.from({ length: 8 }, (_, j) => [j * row, row, 8 * row]),
    );
  });

  it('a gap, an overlap or a whole edge beside parts is a diagnostic naming the edges and the fix', () => {
    const gap = doc();
    gap.app.edges = gap.app.edges.filter((e) => !(e.from.node === 'slice#3' && e.to.node === 'check'));
    expect(messages(gap)).toContainEqual(
      expect.stringMatching(
        /^app\.edges\[\d+\]\.toTokens: tokens 3\.\.3 of check\.in are fed by no edge \(between app\.edges\[\d+\] and app\.edges\[\d+\]\) \(add an edge landing on tokens 3\.\.3/,
      ),
    );
    const overlap = doc();
    overlap.app.edges.find((e) => e.from.node === 'slice#3' && e.to.node === 'check')!.toTokens = { first: 2, count: 1, of: 8 };
    expect(messages(overlap)).toContainEqual(expect.stringMatching(/app\.edges\[\d+\] and app\.edges\[\d+\] both feed token 2 of check\.in/));
    expect(messages(overlap)).toContainEqual(expect.stringMatching(/tokens 3\.\.3 of check\.in are fed by no edge/));
    const whole = doc();
    whole.app.nodes.push({ id: 'other', kernel: 'matrix.produce', params: { width: 3, height: 16 } });
    whole.mapping.other = 'cpu@h0';
    whole.app.edges.push({ from: { node: 'other', port: 'out' }, to: { node: 'check', port: 'in' } });
    expect(messages(whole)).toContainEqual(
      expect.stringMatching(
        /^app\.edges\[16\]\.to: input check\.in is fed whole by app\.edges\[16\] and in parts by app\.edges\[1\], .*remove the whole edge or the parts/,
      ),
    );
  });

  it("the checker's expectation is derived through the parts only when every part agrees", () => {
    expect(analyze(doc()).model!.derived?.get('check')).toMatchObject({ expected_offset: 1, scale: 1 });
    const odd = doc();
    odd.app.nodes.find((n) => n.id === 'slice#5')!.params!.nb_loop = 0;
    expect(analyze(odd).model!.derived?.get('check')).toBeUndefined();
  });

  it('token types are compared, and a rate must split the first dimension evenly', () => {
    const uneven = splitJoinDocument({ slices: 8, width: 3, height: 12, arch: oneHost, pe: () => 'cpu@h0' });
    expect(messages(uneven)).toContainEqual(
      expect.stringMatching(/^app\.nodes\[0\]\.rates\.out: rate 8 does not split port out of node \"frame\" into equal tokens/),
    );
    const wide = doc();
    wide.app.nodes[1].params = { width: 3, height: 4, nb_loop: 5 };
    expect(messages(wide)).toContainEqual(
      expect.stringMatching(/^app\.edges\[0\]: token type mismatch: a token of frame\.out is matrix<f32>\[2x3\] but slice\.in takes matrix<f32>\[4x3\]/),
    );
    const of = doc();
    of.app.edges[0].fromTokens = { first: 0, count: 1, of: 4 };
    expect(messages(of)).toContainEqual(
      'app.edges[0].fromTokens.of: frame.out has 8 tokens per firing (its rate), not 4 (set of to 8, or give frame.out the rate 4)',
    );
  });
});

describe('views, not copies', () => {
  it('on one PE the 1 -> 8 split and 8 -> 1 join allocate no copy: the slices read ranges of the frame, the checker one range of the parts laid out together', () => {
    for (const overlap of [false, true]) {
      const g = ig(splitJoinDocument({ slices: 8, width: 4, height: 16, arch: oneHost, pe: () => 'cpu@h0' }), overlap);
      const m = g.memory['cpu@h0' as never];
      expect(m).toMatchObject({ views: 7, gathers: 0, gatherBytes: 0 });
      // The frame (256 bytes) and one unit of the 8 slices' outputs (256 bytes): nothing else.
      expect(m.after).toBe(512);
      const p = allPrograms(g)['cpu@h0' as never];
      const actions = p.phases.flatMap((ph) => ph.actions);
      expect(actions.some((a) => a.op === 'transfer')).toBe(false);
      const fires = actions.filter((a) => a.op === 'fire');
      const slice3 = fires.find((a) => a.node === 'slice#3')!;
      expect(slice3.inputs.in).toMatchObject({ offset: 3 * 32, bytes: 32 });
      const check = fires.find((a) => a.node === 'check')!;
      expect(check.inputs.in).toMatchObject({ offset: 0, bytes: 256 });
      expect(check.parts!.in).toHaveLength(8);
      expect(check.inputs.in.buffer).toBe(check.parts!.in[0].buffer);
      const unit = p.allocations.find((a) => a.buffers.includes(check.inputs.in.buffer))!;
      expect(unit.bytes).toBe(256);
      expect(check.parts!.in.map((x) => unit.offsets![unit.buffers.indexOf(x.buffer)])).toEqual([0, 32, 64, 96, 128, 160, 192, 224]);
      expect(simulate(g, 4).violations).toEqual([]);
    }
  });

  it('across PEs only the part crosses: each copy holds one slice and its transfer reads that range', () => {
    const g = ig(splitJoinDocument({ slices: 8, width: 4, height: 16, arch: twoHosts, pe: (id) => (id.startsWith('slice') ? 'cpu@h1' : 'cpu@h0') }));
    const transfers = Object.values(allPrograms(g))
      .flatMap((p) => p.phases.flatMap((ph) => ph.actions))
      .filter((a) => a.op === 'transfer' && a.fromPe === 'cpu@h0');
    const unique = new Map(transfers.map((t) => [t.op === 'transfer' && t.to.buffer, t]));
    expect(unique.size).toBe(8);
    expect([...unique.values()].map((t) => t.op === 'transfer' && [t.bytes, t.from.offset])).toEqual(Array.from({ length: 8 }, (_, j) => [32, j * 32]));
    expect(simulate(g, 4).violations).toEqual([]);
  });

  it('parts arriving with different lags are gathered, and the memory report counts the gather', () => {
    const g = ig(
      splitJoinDocument({
        slices: 4,
        width: 2,
        height: 8,
        arch: oneHost,
        pe: (id) => (id.startsWith('slice') && Number(id.slice(6)) % 2 ? 'gpu0@h0' : 'cpu@h0'),
      }),
    );
    expect(g.memory['cpu@h0' as never]).toMatchObject({ views: 0, gathers: 1, gatherBytes: 64 });
    const check = Object.values(allPrograms(g))
      .flatMap((p) => p.phases.flatMap((ph) => ph.actions))
      .find((a) => a.op === 'fire' && a.node === 'check');
    expect(check?.op === 'fire' && [check.inputs.in, check.parts?.in.length]).toEqual([undefined, 4]);
    for (const sync of SYNC_MODES) expect(simulate(g, 5, { sync }).violations).toEqual([]);
  });
});

describe('simulate checks ranges', () => {
  const joined = () => ig(splitJoinDocument({ slices: 4, width: 2, height: 8, arch: oneHost, pe: () => 'cpu@h0' }));

  it('a view laid out at the wrong offset is a violation', () => {
    const g = joined();
    const k = g.buffers.view.findIndex((v) => v >= 0);
    g.buffers.viewOffset[k] += 4;
    for (const sync of SYNC_MODES)
      expect(simulate(g, 4, { sync }).violations.join('\n')).toMatch(/check\.in( part \d)? reads .* expected slice#\d\.out iteration/);
  });

  it('a split read at the wrong offset is a violation', () => {
    const g = joined();
    const i = g.programs.fire.inputs.offset.findIndex((o) => o > 0);
    g.programs.fire.inputs.offset[i] -= 8;
    for (const sync of SYNC_MODES)
      expect(simulate(g, 4, { sync }).violations.join('\n')).toMatch(
        /slice#\d\.in reads frame\.out iteration \d \(bytes \d+\.\.\) from bn_0, expected frame\.out iteration \d \(bytes \d+\.\.\)/,
      );
  });

  it('a part read from the wrong iteration is a violation', () => {
    const g = ig(
      splitJoinDocument({
        slices: 4,
        width: 2,
        height: 8,
        arch: oneHost,
        pe: (id) => (id.startsWith('slice') && Number(id.slice(6)) % 2 ? 'gpu0@h0' : 'cpu@h0'),
      }),
    );
    const s = g.order.indexOf('check' as never);
    const { start, lag } = g.programs.fire.inputs;
    const i = Array.from(lag.subarray(start[s], start[s + 1])).findIndex((l) => l > 0) + start[s];
    lag[i] -= 1;
    expect(simulate(g, 4).violations.join('\n')).toMatch(/check\.in part \d reads slice#\d\.out iteration \d .* expected slice#\d\.out iteration \d/);
  });

  it('a view clobbered by another buffer sharing its storage is a violation', () => {
    // A second reader of the whole frame, after the join: the frame must outlive the slices' outputs.
    const doc = splitJoinDocument({ slices: 4, width: 2, height: 8, arch: oneHost, pe: () => 'cpu@h0' });
    doc.app.nodes.push({ id: 'tail', kernel: 'matrix.consume', params: { width: 2, height: 8 }, rates: { in: 4 } });
    doc.app.edges.push({ from: { node: 'frame', port: 'out' }, to: { node: 'tail', port: 'in' } });
    doc.mapping.tail = 'cpu@h0';
    const g = ig(doc);
    expect(simulate(g, 4).violations).toEqual([]);
    // The frame's buffer moved into the joined input's storage: the slices' outputs overwrite it before tail reads it.
    const base = g.buffers.view.find((v) => v >= 0)!;
    g.buffers.color[0] = g.buffers.color[base];
    for (const sync of SYNC_MODES)
      expect(simulate(g, 4, { sync }).violations.join('\n')).toMatch(/tail\.in reads slice#\d\.out iteration \d .*expected frame\.out/);
  });
});

describe('random lowered split/join graphs', () => {
  it('simulate() passes in both sync modes, with and without overlap', () => {
    let views = 0;
    let gathers = 0;
    fc.assert(
      fc.property(
        fc.record({
          seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
          nodes: fc.integer({ min: 2, max: 12 }),
          hosts: fc.integer({ min: 1, max: 3 }),
          maxGpus: fc.integer({ min: 0, max: 2 }),
          overlap: fc.boolean(),
        }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (p, seed) => {
          const g = ig(randomDocument(p.seed, { ...p, splitJoin: true }));
          for (const m of Object.values(g.memory)) {
            views += m.views ?? 0;
            gathers += m.gathers ?? 0;
          }
          for (const sync of SYNC_MODES) {
            const sim = simulate(g, 5, { sync, seed });
            expect(sim.violations, sync).toEqual([]);
            for (const n of g.order) expect(sim.fires[n], `${sync} ${n}`).toBe(5);
          }
        },
      ),
      { numRuns: 120 },
    );
    // The generator reaches both layouts.
    expect(views).toBeGreaterThan(0);
    expect(gathers).toBeGreaterThan(0);
  });
});

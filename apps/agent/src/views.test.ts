import { describe, expect, it } from 'vitest';
import { type ProjectDocument, type TraceEvent } from '@pipeloom/core';
import { splitJoinDocument } from '@pipeloom/core/testing';
import { agentsForSuite } from './testing/suite.js';
import { compileOrThrow, connect, example } from './testing/fixtures.js';
import { toText } from './cli/compile.js';

// A hand-lowered 1 -> 8 split, 8 slices (matrix.increment on 1/8 of the rows each) and 8 -> 1
// join into a checker (matrix.consume: every element must be the iteration + 1), on real agent
// processes on loopback, real WebGPU (the CPU adapter) for the GPU PEs. The split's parts are
// views of the frame's buffer (or copies of just the part where they cross a PE); the join's
// parts are laid out as views of one buffer where they can be, gathered where not.

const agentsOf = agentsForSuite(['h0', 'h1']);

const ITERATIONS = 12;
const fired = (events: TraceEvent[], node: string) => events.filter((e) => e.kind === 'fire' && e.node === node).map((e) => e.iteration);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// Each mapping with what the checker's PE reports: buffers laid out as views, inputs gathered.
const mappings: [string, (id: string) => string, { views: number; gathers: number }][] = [
  ['one PE (cpu@h0): views, no copy', () => 'cpu@h0', { views: 7, gathers: 0 }],
  [
    'frame on cpu@h0, slices and checker on gpu0@h0: parts copied to the GPU, the join laid out as views there',
    (id) => (id === 'frame' ? 'cpu@h0' : 'gpu0@h0'),
    { views: 7, gathers: 0 },
  ],
  [
    'slices on cpu@h1: only each part crosses the hosts, and back into the views of the join',
    (id) => (id.startsWith('slice') ? 'cpu@h1' : 'cpu@h0'),
    { views: 7, gathers: 0 },
  ],
  [
    'odd slices on gpu0@h0: parts arriving in different cycles are gathered',
    (id) => (id.startsWith('slice') && Number(id.slice(6)) % 2 ? 'gpu0@h0' : 'cpu@h0'),
    { views: 0, gathers: 1 },
  ],
];

function doc(pe: (id: string) => string): ProjectDocument {
  return splitJoinDocument({ slices: 8, width: 16, height: 64, nbLoop: 5, arch: example('piic').arch, pe, iterations: ITERATIONS });
}

describe('1 -> 8 split, 8 slices, 8 -> 1 join, checked exactly', () => {
  for (const [name, pe, joins] of mappings) {
    for (const sync of ['self-timed', 'barrier'] as const) {
      it(`${name}, ${sync}`, async () => {
        const c = await connect(
          agentsOf().agents.map((a) => a.url),
          agentsOf().token,
        );
        try {
          const ig = compileOrThrow(doc(pe), false);
          expect(ig.memory[pe('check') as never]).toMatchObject(joins);
          expect(c.check(ig)).toEqual([]);
          const r = await c.run(ig, { iterations: ITERATIONS, sync }).done;
          expect(r.failure).toBeUndefined();
          expect(r.ok).toBe(true);
          expect(fired(r.events, 'check')).toEqual(range(ITERATIONS));
          for (let j = 0; j < 8; j++) expect(fired(r.events, `slice#${j}`)).toEqual(range(ITERATIONS));
        } finally {
          c.close();
        }
      });
    }
  }

  it('a wrong slice is caught: the checker sees the value of the slice that did not increment', async () => {
    const d = doc(() => 'cpu@h0');
    d.app.nodes.find((n) => n.id === 'slice#5')!.params!.nb_loop = 0; // increments by 0
    const c = await connect(
      agentsOf().agents.map((a) => a.url),
      agentsOf().token,
    );
    try {
      const r = await c.run(compileOrThrow(d, false), { iterations: 2, sync: 'barrier' }).done;
      expect(r.ok).toBe(false);
      expect(r.failure?.node).toBe('check');
    } finally {
      c.close();
    }
  });
});

describe('pipeloom compile shows the views', () => {
  it('on one PE: the parts in one storage, 7 views and no gather in the memory report', () => {
    const d = doc(() => 'cpu@h0');
    const text = toText(d, compileOrThrow(d, false));
    expect(text).toMatch(/slice#3\.out .* written by slice#3, in bn_1's storage at byte 1536; read by check\.in/);
    expect(text).toMatch(/cpu@h0 .*; 7 views, 0 gathers$/m);
  });
});

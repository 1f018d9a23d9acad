import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentsForSuite } from './testing/suite.js';
import { pipeloomInProcess } from './testing/fixtures.js';
import { encode } from './io/formats.js';

// Real data in and out on real agents: an agent serving a data root (--data), a pipeline
// reading a .npy with io.read and writing each iteration's result with io.write, in static and
// task-bag mode; and each bad input refused or failed naming the node, the file and the fix.

const base = realpathSync(mkdtempSync(join(tmpdir(), 'pipeloom-io-runs-')));
const data = join(base, 'data');
const ro = join(base, 'ro');
mkdirSync(data);
mkdirSync(ro);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Bytes one sink may write in a run: room for a few small files, not for the big one below. */
const QUOTA = 4096;
const agentsOf = agentsForSuite(['h0'], { args: ['--data', `d=${data}`, '--data-ro', `ro=${ro}`, '--data-quota', String(QUOTA)] });

/** A .npy of f32 values, as io.write encodes one (io/formats.ts). */
const npy = (values: number[], shape: number[]) => Buffer.concat(encode('npy', Float32Array.from(values), 'f32', shape));
const VALUES = Array.from({ length: 12 }, (_, i) => i * 0.5);
writeFileSync(join(data, 'in.npy'), npy(VALUES, [3, 4]));

/** io.read -> generic.sum (one input: a copy) -> io.write, on h0's CPU. */
function doc(name: string, src: Record<string, unknown>, snk: Record<string, unknown>, iterations = 3, shape = '3,4'): string {
  const file = join(base, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      format: 'pipeloom/v2',
      name,
      app: {
        nodes: [
          { id: 'src', kernel: 'io.read', params: src },
          { id: 'mid', kernel: 'generic.sum', params: { count: 1, shape, kind: 'array' } },
          { id: 'snk', kernel: 'io.write', params: snk },
        ],
        edges: [
          { from: { node: 'src', port: 'out' }, to: { node: 'mid', port: 'in0' } },
          { from: { node: 'mid', port: 'sum' }, to: { node: 'snk', port: 'in' } },
        ],
      },
      arch: { hosts: [{ id: 'h0', cpus: 1 }] },
      mapping: { src: 'cpu@h0', mid: 'cpu@h0', snk: 'cpu@h0' },
      options: { iterations },
    }),
  );
  return file;
}

const run = (file: string, ...flags: string[]) => pipeloomInProcess('run', file, '--agents', agentsOf().agents[0].url, '--token', agentsOf().token, ...flags);
/** The 12 f32 values at the end of a file (after its header). */
const floats = (file: string) => {
  const b = readFileSync(file);
  return [...new Float32Array(new Uint8Array(b.subarray(b.length - 48)).buffer)];
};

describe('a pipeline reading and writing files on an agent', () => {
  for (const mode of ['static', 'taskbag'] as const) {
    it(`${mode}: reads in.npy (shape from its header), writes one .npy per iteration, and says what it wrote`, async () => {
      const out = `out-${mode}`;
      const r = await run(doc(`copy-${mode}`, { path: 'd:in.npy' }, { path: `d:${out}/%02d.npy` }), '--data', `d=${data}`, '--mode', mode, '--format', 'json');
      expect(r.stderr).not.toMatch(/error/i);
      expect(r.status).toBe(0);
      expect(readdirSync(join(data, out)).sort()).toEqual(['00.npy', '01.npy', '02.npy']);
      for (const f of readdirSync(join(data, out))) expect(floats(join(data, out, f))).toEqual(VALUES);
      const summary = JSON.parse(r.stdout) as { writes: unknown[] };
      // Static: the PE the document maps the sink on; a task bag: whichever of the agent's PEs took its tasks.
      const pe = mode === 'static' ? 'cpu@h0' : expect.stringMatching(/^(cpu0|gpu0)@h0$/);
      expect(summary.writes).toEqual([{ node: 'snk', host: 'h0', pe, path: `d:${out}/%02d.npy`, bytes: 3 * (128 + 48), files: 3, iterations: 3 }]);
    });
  }
});

describe('a video in, images out', () => {
  it("reads a Y4M clip's luma frame by frame (as f32 in [0, 1]) and writes each as a PNG", async () => {
    // 3 frames of 4x6 (4:2:0): luma k * 100 in frame k.
    const frame = (k: number) => Buffer.concat([Buffer.from('FRAME\n'), Buffer.alloc(24, k * 100), Buffer.alloc(6, 128), Buffer.alloc(6, 128)]);
    writeFileSync(join(data, 'clip.y4m'), Buffer.concat([Buffer.from('YUV4MPEG2 W6 H4 F25:1 Ip A1:1 C420jpeg\n'), frame(0), frame(1), frame(2)]));
    const file = join(base, 'video.json');
    writeFileSync(
      file,
      JSON.stringify({
        format: 'pipeloom/v2',
        name: 'video',
        app: {
          nodes: [
            { id: 'clip', kernel: 'io.read', params: { path: 'd:clip.y4m', convert: 'unit' } },
            { id: 'frames', kernel: 'io.write', params: { path: 'd:frames/%02d.png' } },
          ],
          edges: [{ from: { node: 'clip', port: 'y' }, to: { node: 'frames', port: 'in' } }],
        },
        arch: { hosts: [{ id: 'h0', cpus: 1 }] },
        mapping: { clip: 'cpu@h0', frames: 'cpu@h0' },
        options: { iterations: 3 },
      }),
    );
    const r = await run(file, '--data', `d=${data}`);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
    expect(readdirSync(join(data, 'frames')).sort()).toEqual(['00.png', '01.png', '02.png']);
    // Read back as a sequence (values as f32): the last iteration's frame is luma 200 everywhere.
    const back = await run(
      doc('back', { path: 'd:frames/%02d.png', convert: 'f32', kind: 'array' }, { path: 'd:back.raw', format: 'raw', when: 'last' }, 3, '4,6'),
      '--data',
      `d=${data}`,
    );
    expect(back.status).toBe(0);
    const last = readFileSync(join(data, 'back.raw'));
    expect([...new Float32Array(new Uint8Array(last).buffer)]).toEqual(Array.from({ length: 24 }, () => 200));
  });
});

describe('the roots, given by their operator', () => {
  it('pipeloom run --data gives its local agents the same roots', async () => {
    const r = await pipeloomInProcess('run', doc('local', { path: 'd:in.npy' }, { path: 'd:local.npy', when: 'last' }, 2), '--data', `d=${data}`);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/wrote {8}d:local\.npy: 1 file, 176 bytes, 2 iterations \(node snk on cpu@h0\)/);
    expect(floats(join(data, 'local.npy'))).toEqual(VALUES);
  });

  it("compile and predict --data fill the shape from the file's header; without it the shape is missing, naming the node and the fix", async () => {
    const file = doc('compile', { path: 'd:in.npy' }, { path: 'd:x.npy' });
    expect((await pipeloomInProcess('compile', file, '--data', `d=${data}`)).status).toBe(0);
    expect((await pipeloomInProcess('predict', file, '--data', `d=${data}`)).status).toBe(0);
    const without = await pipeloomInProcess('compile', file);
    expect(without.status).toBe(2);
    expect(without.stderr).toContain(
      'node "src": its params give no data type (param shape: empty; pipeloom fills it from the file\'s header (compile, predict or run with --data)',
    );
  });

  it('an agent refuses to start on a --data directory that does not exist, naming it', async () => {
    const r = await pipeloomInProcess('agent', '--name', 'h9', '--data', `x=${join(base, 'nowhere')}`);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`pipeloom agent: --data x=${join(base, 'nowhere')}: ${join(base, 'nowhere')}: no such directory; create it or name another`);
  });
});

describe('bad input, named with node, file and fix', () => {
  it('a shape the file disagrees with: the agent refuses the run before anything runs', async () => {
    // Without --data the CLI reads no header: the agent's check finds it.
    const r = await run(doc('wrong-shape', { path: 'd:in.npy', shape: '4x4', dtype: 'f32' }, { path: 'd:never.npy', when: 'last' }, 3, '4,4'));
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('node src (io.read): d:in.npy is 3x4 f32, the document says 4x4; set shape to 3x4 or leave it out');
    expect(readdirSync(data)).not.toContain('never.npy');
  });

  it('the CLI says the same with --data, before compiling (exit 2)', async () => {
    const r = await run(doc('wrong-shape-cli', { path: 'd:in.npy', shape: '4x4' }, { path: 'd:never.npy', when: 'last' }, 3, '4,4'), '--data', `d=${data}`);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('node src (io.read): d:in.npy is 3x4 f32, the document says 4x4');
  });

  it('a missing file, an escaping path, an unknown root, a read-only root for a sink', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [
        { path: 'd:nope.npy', shape: '3x4', dtype: 'f32' },
        { path: 'd:x.npy' },
        'node src (io.read): d:nope.npy: no such file in data root "d"; check the name, or put the file there',
      ],
      [
        { path: 'd:../data/in.npy', shape: '3x4', dtype: 'f32' },
        { path: 'd:x.npy' },
        'node src (io.read): d:../data/in.npy: "d:../data/in.npy" leaves root "d" (..)',
      ],
      [
        { path: 'images:in.npy', shape: '3x4', dtype: 'f32' },
        { path: 'd:x.npy' },
        'node src (io.read): images:in.npy: data root "images" is unknown to this agent; this agent serves "d", "ro"',
      ],
      [{ path: 'd:in.npy' }, { path: 'ro:x.npy' }, 'node snk (io.write): ro:x.npy: data root "ro" is read-only on this agent (--data-ro)'],
    ];
    for (const [src, snk, message] of cases) {
      const r = await run(doc('bad', src, { ...snk, shape: '3x4', dtype: 'f32' }), ...(src.shape ? [] : ['--data', `d=${data}`]));
      expect(r.status, message).not.toBe(0);
      expect(r.stdout + r.stderr, message).toContain(message);
    }
  });

  it('a sequence shorter than the run with end stop: refused; with loop it runs', async () => {
    mkdirSync(join(data, 'seq'), { recursive: true });
    for (let k = 0; k < 2; k++) writeFileSync(join(data, 'seq', `${k}.npy`), npy(VALUES, [3, 4]));
    const short = await run(doc('short', { path: 'd:seq/%d.npy', shape: '3x4', dtype: 'f32' }, { path: 'd:seq-out.npy', when: 'last', shape: '3x4' }, 3));
    expect(short.status).not.toBe(0);
    expect(short.stdout + short.stderr).toContain(
      'node src (io.read): d:seq/%d.npy has 2 frames, the run asks for 3; set end to loop or hold, add frames, or run fewer iterations',
    );
    const looped = await run(
      doc('looped', { path: 'd:seq/%d.npy', shape: '3x4', dtype: 'f32', end: 'loop' }, { path: 'd:seq-out.npy', when: 'last', shape: '3x4' }, 3),
    );
    expect(looped.status).toBe(0);
  });

  it("a disk that fills mid-run (the agent's --data-quota): the run fails naming the sink; the files written stay whole", async () => {
    // 1024 f32 per file (4 KiB + header): the first fits the quota, the second does not.
    writeFileSync(
      join(data, 'big.npy'),
      npy(
        Array.from({ length: 1024 }, (_, i) => i),
        [1024],
      ),
    );
    chmodSync(join(data, 'big.npy'), 0o644);
    const r = await run(doc('full', { path: 'd:big.npy' }, { path: 'd:full/%02d.raw', format: 'raw' }, 3, '1024'), '--data', `d=${data}`, '--format', 'json');
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/snk/);
    expect(r.stdout + r.stderr).toContain('d:full/01.raw: no space: the sink has written 4096 bytes and this file needs 4096 more');
    expect(readdirSync(join(data, 'full'))).toEqual(['00.raw']);
    expect(readFileSync(join(data, 'full', '00.raw')).length).toBe(4096);
    // The failed run still says what the sink wrote.
    expect((JSON.parse(r.stdout) as { writes: unknown }).writes).toEqual([
      { node: 'snk', host: 'h0', pe: 'cpu@h0', path: 'd:full/%02d.raw', bytes: 4096, files: 1, iterations: 1 },
    ]);
  });
});

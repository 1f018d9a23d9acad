import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { encode as encodePng } from 'fast-png';
import { afterAll, describe, expect, it } from 'vitest';
import { findKernel, IO_READ, IO_WRITE, portsFor, withDefaults, type IoFormat, type Params } from '@pipeloom/kernels';
import fc from 'fast-check';
import { AgentDataHost } from './host.js';
import { FormatError, parseHeader } from './formats.js';
import { dataRefusal } from './check.js';
import { naming } from './files.js';
import { fillIo } from './fill.js';
import type { DataRoot } from './roots.js';
import type { ProjectDocument } from '@pipeloom/core';

// io.read and io.write as a PE thread runs them (the data host the kernels' twins call), on
// real files in a temporary root: each format written and read back, sequences and video
// ends, and each bad input refused naming the path and the fix.

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'pipeloom-io-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const roots: DataRoot[] = [{ name: 'd', dir }];
const VIEW = { f32: Float32Array, u32: Uint32Array, i32: Int32Array, u8: Uint8Array } as const;

/** The typed arrays of a node's ports, sized by its params as the compiler would. */
function ports(kernel: string, params: Params, side: 'inputs' | 'outputs') {
  const spec = findKernel(kernel)!;
  const p = withDefaults(spec, params);
  return Object.fromEntries(
    portsFor(spec, p)[side].map((port) => {
      const t = port.type(p);
      return [port.name, new VIEW[t.element](t.shape.reduce((a, b) => a * b, 1))];
    }),
  );
}

class Node {
  state = {};
  constructor(
    readonly host: AgentDataHost,
    readonly kernel: string,
    readonly params: Params,
  ) {}
  read(iteration = 0) {
    const params = withDefaults(findKernel(this.kernel)!, this.params);
    const outputs = ports(this.kernel, this.params, 'outputs');
    this.host.read({ params, iteration, inputs: {}, outputs, state: this.state });
    return outputs;
  }
  write(inputs: Record<string, ArrayBufferView>, iteration = 0) {
    const params = withDefaults(findKernel(this.kernel)!, this.params);
    return this.host.write({ params, iteration, inputs, outputs: {}, state: this.state });
  }
}

const host = new AgentDataHost(roots);
const PNG_START = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82]);
const reader = (params: Params) => new Node(host, IO_READ, params);
const writer = (params: Params, h = host) => new Node(h, IO_WRITE, params);
const ramp = (n: number, scale = 1) => Float32Array.from({ length: n }, (_, i) => (i % 256) * scale);

describe('io.write then io.read, each format', () => {
  it('.npy keeps dtype and shape in its header', () => {
    const data = ramp(12);
    const r = writer({ path: 'd:a.npy', when: 'last', dtype: 'f32', shape: '3x4' }).write({ in: data });
    expect(r).toEqual({ ok: true, values: { path: 'd:a.npy', bytes: statSync(join(dir, 'a.npy')).size, files: 1, iterations: 1 } });
    expect(statSync(join(dir, 'a.npy')).size).toBe(128 + 48);
    expect(readFileSync(join(dir, 'a.npy')).subarray(0, 6).toString('latin1')).toBe('\x93NUMPY');
    const out = reader({ path: 'd:a.npy', shape: '3x4', dtype: 'f32' }).read();
    expect([...(out.out as Float32Array)]).toEqual([...data]);
  });

  it('raw reads straight into the port; its dtype converts to f32 in [0, 1] with convert unit', () => {
    writeFileSync(join(dir, 'b.raw'), Buffer.from([0, 51, 102, 255]));
    expect([...(reader({ path: 'd:b.raw', dtype: 'u8', shape: '2x2' }).read().out as Uint8Array)]).toEqual([0, 51, 102, 255]);
    expect([...(reader({ path: 'd:b.raw', dtype: 'u8', shape: '2x2', convert: 'unit' }).read().out as Float32Array)]).toEqual([
      ...Float32Array.from([0, 0.2, 0.4, 1]),
    ]);
    const u16 = Buffer.alloc(4);
    u16.writeUInt16LE(65535, 0);
    u16.writeUInt16LE(7, 2);
    writeFileSync(join(dir, 'c.raw'), u16);
    expect([...(reader({ path: 'd:c.raw', dtype: 'u16', shape: '2' }).read().out as Uint32Array)]).toEqual([65535, 7]);
  });

  it('PGM and PPM: f32 in [0, 1] written as 8-bit samples', () => {
    writer({ path: 'd:g.pgm', when: 'last', dtype: 'f32', shape: '2x3' }).write({ in: Float32Array.from([0, 0.2, 0.4, 0.6, 0.8, 1]) });
    expect(readFileSync(join(dir, 'g.pgm')).toString('latin1', 0, 11)).toBe('P5\n3 2\n255\n');
    expect([...(reader({ path: 'd:g.pgm', shape: '2x3' }).read().out as Uint8Array)]).toEqual([0, 51, 102, 153, 204, 255]);
    writer({ path: 'd:c.ppm', when: 'last', dtype: 'u8', shape: '1x2x3' }).write({ in: Uint8Array.from([1, 2, 3, 4, 5, 6]) });
    expect([...(reader({ path: 'd:c.ppm', shape: '1x2x3' }).read().out as Uint8Array)]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('PNG, 8-bit grey and 16-bit', () => {
    writer({ path: 'd:p.png', when: 'last', dtype: 'u8', shape: '2x2' }).write({ in: Uint8Array.from([9, 8, 7, 6]) });
    expect([...(reader({ path: 'd:p.png', shape: '2x2', dtype: 'u8' }).read().out as Uint8Array)]).toEqual([9, 8, 7, 6]);
    // A file far smaller than its pixels (they compress): not truncated.
    writer({ path: 'd:flat.png', when: 'last', dtype: 'u8', shape: '64x64' }).write({ in: new Uint8Array(4096).fill(7) });
    expect(statSync(join(dir, 'flat.png')).size).toBeLessThan(4096);
    expect((reader({ path: 'd:flat.png', shape: '64x64', dtype: 'u8' }).read().out as Uint8Array).every((x) => x === 7)).toBe(true);
    writer({ path: 'd:p16.png', when: 'last', dtype: 'u32', shape: '1x2' }).write({ in: Uint32Array.from([1000, 70000]) });
    expect([...(reader({ path: 'd:p16.png', shape: '1x2', dtype: 'u16' }).read().out as Uint32Array)]).toEqual([1000, 65535]);
  });

  it('a sequence by pattern: one file per iteration, read back frame k at iteration k; loop, hold and stop at the end', () => {
    const w = writer({ path: 'd:seq/%03d.png', when: 'each', dtype: 'u8', shape: '1x2' });
    for (let k = 0; k < 3; k++) expect(w.write({ in: Uint8Array.from([k, 10 + k]) }, k)).toMatchObject({ values: { files: k + 1, iterations: k + 1 } });
    expect(readdirSync(join(dir, 'seq')).sort()).toEqual(['000.png', '001.png', '002.png']);
    const at = (end: string, k: number) => [...(reader({ path: 'd:seq/%03d.png', shape: '1x2', dtype: 'u8', end }).read(k).out as Uint8Array)];
    expect(at('stop', 2)).toEqual([2, 12]);
    expect(at('loop', 4)).toEqual([1, 11]);
    expect(at('hold', 7)).toEqual([2, 12]);
    expect(() => at('stop', 3)).toThrow('kernel "io.read": d:seq/%03d.png: the sequence has 3 frames; iteration 3 asks for frame 3; set end to loop or hold');
  });

  it('several frames per firing (frames): written as consecutive files of a pattern, read back stacked', () => {
    const w = writer({ path: 'd:stack/%02d.raw', format: 'raw', when: 'each', dtype: 'u8', shape: '1x2', frames: 3 });
    expect(w.write({ in: Uint8Array.from([0, 1, 2, 3, 4, 5]) }, 0)).toMatchObject({ values: { files: 3, iterations: 1 } });
    w.write({ in: Uint8Array.from([6, 7, 8, 9, 10, 11]) }, 1);
    expect(readdirSync(join(dir, 'stack')).sort()).toEqual(['00.raw', '01.raw', '02.raw', '03.raw', '04.raw', '05.raw']);
    expect([...readFileSync(join(dir, 'stack/04.raw'))]).toEqual([8, 9]);
    const r = reader({ path: 'd:stack/%02d.raw', format: 'raw', dtype: 'u8', shape: '1x2', frames: 2 });
    expect([...(r.read(1).out as Uint8Array)]).toEqual([4, 5, 6, 7]);
    expect(() => r.read(3)).toThrow('the sequence has 6 frames; iteration 3 asks for frame 6');
    expect(() => reader({ path: 'd:a.npy', frames: 2, shape: '3x4', dtype: 'f32' }).read()).toThrow(
      /param frames: more than one frame per firing needs a sequence/,
    );
  });

  it('Y4M: frames appended, read back as y, u and v planes', () => {
    const w = writer({ path: 'd:v.y4m', format: 'y4m', when: 'append', dtype: 'u8', shape: '4x6' });
    for (let k = 0; k < 3; k++) w.write({ y: new Uint8Array(24).fill(k), u: new Uint8Array(6).fill(100 + k), v: new Uint8Array(6).fill(200 + k) }, k);
    expect(statSync(join(dir, 'v.y4m')).size).toBe(readFileSync(join(dir, 'v.y4m')).indexOf(0x0a) + 1 + 3 * (6 + 36));
    const r = reader({ path: 'd:v.y4m', shape: '4x6', end: 'loop' });
    const f1 = r.read(1);
    expect([f1.y[0], f1.u[5], f1.v[0], f1.y.length, f1.u.length]).toEqual([1, 101, 201, 24, 6]);
    expect(r.read(4).y[0]).toBe(1);
    const two = reader({ path: 'd:v.y4m', shape: '4x6', frames: 2, end: 'loop' }).read(1);
    expect([two.y.length, two.y[0], two.y[24], two.u[6]]).toEqual([48, 2, 0, 100]);
  });
});

describe('bad input, each named with its fix', () => {
  it('a missing file, a truncated .npy and a wrong shape', () => {
    expect(() => reader({ path: 'd:none.npy', shape: '2', dtype: 'f32' }).read()).toThrow(
      'd:none.npy: no such file in data root "d"; check the name, or put the file there',
    );
    const whole = readFileSync(join(dir, 'a.npy'));
    writeFileSync(join(dir, 't.npy'), whole.subarray(0, whole.length - 5));
    expect(() => reader({ path: 'd:t.npy', shape: '3x4', dtype: 'f32' }).read()).toThrow(
      'kernel "io.read": d:t.npy: truncated: 3x4 f32 needs 176 bytes, the file has 171; write the file again whole',
    );
    expect(() => reader({ path: 'd:a.npy', shape: '4x4', dtype: 'f32' }).read()).toThrow(
      'd:a.npy: is 3x4 f32, the document says 4x4; set shape to 3x4 or leave it out',
    );
  });

  it('a PNG whose data is not what its header says', () => {
    const png = Buffer.from(encodePng({ width: 2, height: 2, data: Uint8Array.from([1, 2, 3, 4]), channels: 1, depth: 8 }));
    png.writeUInt32BE(3, 16); // IHDR width 3: the data holds 2 columns (and the CRC no longer matches)
    writeFileSync(join(dir, 'lie.png'), png);
    expect(() => reader({ path: 'd:lie.png', shape: '2x3', dtype: 'u8' }).read()).toThrow(
      "d:lie.png: the PNG's IHDR chunk fails its CRC (the file is damaged); write the file again",
    );
    // The CRC made right: the data is still not the header's 3 columns.
    png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
    writeFileSync(join(dir, 'lie.png'), png);
    expect(() => reader({ path: 'd:lie.png', shape: '2x3', dtype: 'u8' }).read()).toThrow(
      "d:lie.png: the PNG's image data is 6 bytes, its header's 3x2 needs 8; write the file again whole",
    );
  });

  it('a raw file of another size than dtype x shape', () => {
    expect(() => reader({ path: 'd:b.raw', dtype: 'f32', shape: '2x2' }).read()).toThrow(
      'truncated: 2x2 f32 needs 16 bytes, the file has 4; check the file, or set dtype and shape to what it holds',
    );
  });

  it("the agent's check: a short sequence with stop, an escaping path, an unknown root, a read-only root", () => {
    const check = (kernel: string, params: Params, iterations = 3, r = roots) =>
      dataRefusal('h0', [{ node: 'src', kernel, params: withDefaults(findKernel(kernel)!, params) }], r, iterations);
    expect(check(IO_READ, { path: 'd:seq/%03d.png' }, 3)).toBeUndefined();
    expect(check(IO_READ, { path: 'd:seq/%03d.png' }, 5)).toBe(
      'agent h0: node src (io.read): d:seq/%03d.png has 3 frames, the run asks for 5; set end to loop or hold, add frames, or run fewer iterations',
    );
    expect(check(IO_READ, { path: 'd:seq/%03d.png', end: 'loop' }, 5)).toBeUndefined();
    expect(check(IO_READ, { path: 'd:../x.npy' })).toBe(
      'agent h0: node src (io.read): d:../x.npy: "d:../x.npy" leaves root "d" (..); name a file inside root "d"',
    );
    expect(check(IO_READ, { path: 'images:x.npy' })).toBe(
      'agent h0: node src (io.read): images:x.npy: data root "images" is unknown to this agent; this agent serves "d"',
    );
    expect(check(IO_WRITE, { path: 'd:o.npy', shape: '2' }, 3, [{ ...roots[0], readOnly: true }])).toBe(
      'agent h0: node src (io.write): d:o.npy: data root "d" is read-only on this agent (--data-ro); write to a root the agent serves with --data',
    );
    expect(check(IO_READ, { path: 'd:a.npy', dtype: 'u8' })).toBe(
      'agent h0: node src (io.read): d:a.npy is 3x4 f32, the document says u8; set dtype to f32 or leave it out',
    );
    expect(check(IO_READ, { path: 'd:a.npy', shape: '32x32' })).toBe(
      'agent h0: node src (io.read): d:a.npy is 3x4 f32, the document says 32x32; set shape to 3x4 or leave it out',
    );
  });

  it('a disk that fills mid-run (the quota): the write fails naming the sink, the files written before stay whole', () => {
    const small = new AgentDataHost(roots, 100);
    const w = writer({ path: 'd:q/%02d.raw', format: 'raw', when: 'each', dtype: 'f32', shape: '10' }, small);
    w.write({ in: ramp(10) }, 0);
    w.write({ in: ramp(10) }, 1);
    expect(() => w.write({ in: ramp(10) }, 2)).toThrow(
      /kernel "io\.write": d:q\/02\.raw: no space: the sink has written 80 bytes and this file needs 40 more, past the agent's data quota of 100 bytes/,
    );
    expect(readdirSync(join(dir, 'q')).sort()).toEqual(['00.raw', '01.raw']);
    expect(statSync(join(dir, 'q/01.raw')).size).toBe(40);
    const v = writer({ path: 'd:q.y4m', format: 'y4m', when: 'append', dtype: 'u8', shape: '2x2' }, new AgentDataHost(roots, 60));
    const frame = { y: new Uint8Array(4), u: new Uint8Array(1), v: new Uint8Array(1) };
    v.write(frame, 0);
    const size = statSync(join(dir, 'q.y4m')).size;
    expect(() => v.write(frame, 1)).toThrow(/no space/);
    expect(statSync(join(dir, 'q.y4m')).size).toBe(size);
  });

  // A real full disk where this machine lets the test mount a 64 KiB tmpfs (root); else the quota above stands in.
  const small = join(dir, 'small');
  mkdirSync(small);
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', small], { stdio: 'ignore' }).status === 0;
  afterAll(() => {
    if (mounted) spawnSync('umount', [small], { stdio: 'ignore' });
  });
  it.skipIf(!mounted)(
    'a disk that fills (a 64 KiB tmpfs): the write fails with ENOSPC naming the file and the root; the file before stays whole, no temporary file is left',
    () => {
      const w = writer(
        { path: 'full:f/%02d.raw', format: 'raw', when: 'each', dtype: 'f32', shape: '10000' },
        new AgentDataHost([{ name: 'full', dir: small }]),
      );
      w.write({ in: new Float32Array(10000).fill(1) }, 0);
      expect(() => w.write({ in: new Float32Array(10000) }, 1)).toThrow(
        'kernel "io.write": full:f/01.raw: no space left on the disk of data root "full" (ENOSPC); free space, or write to another root; the files written before stay whole',
      );
      expect(readdirSync(join(small, 'f'))).toEqual(['00.raw']);
      expect(new Float32Array(new Uint8Array(readFileSync(join(small, 'f/00.raw'))).buffer).every((x) => x === 1)).toBe(true);
    },
  );

  it("a full disk's own error (ENOSPC) reads as the quota's does, naming the root", () => {
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(() =>
      naming('d:x.npy', 'd', () => {
        throw full;
      }),
    ).toThrow('d:x.npy: no space left on the disk of data root "d" (ENOSPC); free space, or write to another root; the files written before stay whole');
  });

  it('leaves no temporary file behind', () => {
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(join(dir, 'a.npy'))).toBe(true);
  });
});

describe('sizes from headers (the CLI, before compiling)', () => {
  const doc = (nodes: ProjectDocument['app']['nodes'], edges: ProjectDocument['app']['edges'] = []) =>
    ({ format: 'pipeloom/1', name: 't', app: { nodes, edges }, arch: { hosts: [] }, mapping: {}, options: {} }) as unknown as ProjectDocument;

  it("fills an io.read's shape and dtype from its file, and an io.write's from the node feeding it", () => {
    const { doc: filled, diagnostics } = fillIo(
      doc(
        [
          { id: 'src', kernel: IO_READ, params: { path: 'd:a.npy' } },
          { id: 'snk', kernel: IO_WRITE, params: { path: 'd:copy.npy' } },
        ],
        [{ from: { node: 'src', port: 'out' }, to: { node: 'snk', port: 'in' } }],
      ),
      roots,
    );
    expect(diagnostics).toEqual([]);
    expect(filled.app.nodes.map((n) => n.params)).toEqual([
      { path: 'd:a.npy', shape: '3x4', dtype: 'f32' },
      { path: 'd:copy.npy', shape: '3x4', dtype: 'f32', kind: 'array' },
    ]);
  });

  it('says which node, file, expected and found when the document disagrees', () => {
    const { diagnostics } = fillIo(doc([{ id: 'src', kernel: IO_READ, params: { path: 'd:a.npy', shape: '32x32' } }]), roots);
    expect(diagnostics).toEqual([
      {
        path: 'app.nodes[0].params',
        message: 'node src (io.read): d:a.npy is 3x4 f32, the document says 32x32',
        hint: 'set shape to 3x4 or leave it out',
        severity: 'error',
      },
    ]);
  });
});

describe('headers of any bytes', () => {
  it('every format reads a header or says what is wrong (FormatError), whatever the bytes (fuzz)', () => {
    const prefixes = [Buffer.from([0x93, ...Buffer.from('NUMPY'), 1, 0]), Buffer.from('P5\n'), Buffer.from('P6 '), PNG_START, Buffer.from('YUV4MPEG2 ')];
    fc.assert(
      fc.property(
        fc.constantFrom('npy', 'pgm', 'ppm', 'png', 'y4m') as fc.Arbitrary<IoFormat>,
        fc.nat(prefixes.length - 1),
        fc.uint8Array({ maxLength: 200 }),
        (format, p, tail) => {
          const bytes = Buffer.concat([prefixes[p], Buffer.from(tail)]);
          try {
            const info = parseHeader(format, bytes);
            expect(info.shape.every((d) => Number.isInteger(d) && d > 0)).toBe(true);
            expect(info.offset).toBeGreaterThan(0);
          } catch (e) {
            expect(e).toBeInstanceOf(FormatError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

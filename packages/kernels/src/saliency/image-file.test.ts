import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { getKernel } from '../registry.js';
import { runCpu } from '../gpu/harness.js';
import { decodeImage, registerImageFile, resample } from './image-file.js';

function chunk(type: string, body: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, 'ascii');
  return Buffer.concat([head, Buffer.from(body), Buffer.alloc(4)]); // CRC not checked by the reader
}

/** A PNG with one filter type per row (0..4, cycling), written with node's zlib. */
function png(width: number, height: number, ctype: number, depth: number, rows: number[][], palette?: number[]): Uint8Array {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = depth;
  ihdr[9] = ctype;
  const bpp = Math.max(1, (({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[ctype] * depth) >> 3);
  let prev = new Array(rows[0].length).fill(0);
  const raw: number[] = [];
  rows.forEach((row, y) => {
    const f = y % 5;
    raw.push(f);
    row.forEach((v, i) => {
      const a = i >= bpp ? row[i - bpp] : 0,
        b = prev[i],
        c = i >= bpp ? prev[i - bpp] : 0;
      const pa = Math.abs(b - c),
        pb = Math.abs(a - c),
        pc = Math.abs(a + b - 2 * c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
      raw.push((v - pred) & 0xff);
    });
    prev = row;
  });
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
      chunk('IHDR', ihdr),
      ...(palette ? [chunk('PLTE', Uint8Array.from(palette))] : []),
      chunk('IDAT', deflateSync(Buffer.from(raw))),
      chunk('IEND', new Uint8Array()),
    ]),
  );
}

describe('image files', () => {
  it('reads binary and ASCII PGM, comments included', async () => {
    const p5 = new Uint8Array([...new TextEncoder().encode('P5\n# made by hand\n3 2\n255\n'), 0, 51, 255, 102, 204, 153]);
    expect(await decodeImage(p5)).toEqual({ width: 3, height: 2, data: Float32Array.from([0, 51, 255, 102, 204, 153], (v) => v / 255) });
    const p2 = new TextEncoder().encode('P2 2 2 4\n0 1\n2 4\n');
    expect((await decodeImage(p2)).data).toEqual(Float32Array.from([0, 0.25, 0.5, 1]));
  });

  it('reads 8-bit grey, RGB, RGBA, 16-bit grey and palette PNGs through every row filter', async () => {
    const w = 7,
      h = 6;
    const grey = Array.from({ length: h }, (_, y) => Array.from({ length: w }, (_, x) => (x * 37 + y * 91) % 256));
    const want = Float32Array.from(grey.flat(), (v) => v / 255);
    expect((await decodeImage(png(w, h, 0, 8, grey))).data).toEqual(want);
    const rgb = grey.map((r) => r.flatMap((v) => [v, v, v]));
    const got = (await decodeImage(png(w, h, 2, 8, rgb))).data;
    got.forEach((v, i) => expect(v).toBeCloseTo(want[i], 6));
    const rgba = grey.map((r) => r.flatMap((v) => [v, v, v, 255 - v]));
    (await decodeImage(png(w, h, 6, 8, rgba))).data.forEach((v, i) => expect(v).toBeCloseTo(want[i], 6));
    const g16 = grey.map((r) => r.flatMap((v) => [v, v])); // v * 257: exactly v / 255
    (await decodeImage(png(w, h, 0, 16, g16))).data.forEach((v, i) => expect(v).toBeCloseTo(want[i], 6));
    const pal = [0, 0, 0, 255, 255, 255];
    const idx = grey.map((r) => r.map((v) => (v > 127 ? 1 : 0)));
    expect((await decodeImage(png(w, h, 3, 8, idx, pal))).data).toEqual(Float32Array.from(idx.flat()));
  });

  it('feeds the image source with a registered file, resampled to its size', async () => {
    const rows = Array.from({ length: 4 }, (_, y) => Array.from({ length: 4 }, (_, x) => (x + y) * 30));
    await registerImageFile('scene.png', png(4, 4, 0, 8, rows));
    const out = runCpu(getKernel('saliency.image'), { width: 4, height: 4, scene: 'file', file: 'scene.png' }, {}).outputs.out;
    expect(out).toEqual(Float32Array.from(rows.flat(), (v) => v / 255));
    const half = runCpu(getKernel('saliency.image'), { width: 2, height: 2, scene: 'file', file: 'scene.png' }, {}).outputs.out;
    expect(half.length).toBe(4);
    expect(resample({ width: 2, height: 1, data: Float32Array.from([0, 1]) }, 4, 1)).toEqual(Float32Array.from([0, 0.25, 0.75, 1]));
  });

  it('names the kernel and the fix when the file is missing or unreadable', async () => {
    expect(() => runCpu(getKernel('saliency.image'), { width: 4, height: 4, scene: 'file', file: 'nope.pgm' }, {})).toThrow(
      /saliency.image.*registerImageFile\("nope.pgm"/,
    );
    await expect(decodeImage(new TextEncoder().encode('GIF89a'))).rejects.toThrow(/neither PGM \(P2\/P5\) nor PNG/);
  });
});

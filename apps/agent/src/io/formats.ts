import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32, inflateSync } from 'node:zlib';
import { decode as decodePng, encode as encodePng } from 'fast-png';
import { FILE_DTYPE_BYTES, formatShape, y4mPlanes, type ElementType, type FileDtype, type IoFormat } from '@pipeloom/kernels';

// The file formats io.read and io.write know: what a file's header says (format, dtype, shape,
// where the data starts, how many frames), reading a frame into a port's memory, and encoding
// a port's data as a file. Sizes from a header are checked against the file's length, so a
// truncated file is found before a firing reads it.

/** What a file holds, from its header (or, for raw, from the params). */
export interface FileInfo {
  format: IoFormat;
  dtype: FileDtype;
  /** Extents, outermost first (Y4M: the luma's height x width). */
  shape: number[];
  /** Byte offset of the (first frame's) data. */
  offset: number;
  /** Bytes of one frame's data. */
  bytes: number;
  /** Y4M: whole frames in the file, and bytes from one frame's start to the next. */
  frames?: number;
  stride?: number;
  /** PGM/PPM with samples above 255: two bytes each, big-endian (the format's order). */
  bigEndian?: boolean;
}

/** A file that is not what it should be: what is wrong and the fix (the caller names node and path). */
export class FormatError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'FormatError';
  }
}

/** Most header bytes read to learn a file's format (an .npy header may be up to 64 KiB). */
const HEAD_BYTES = 65_536 + 16;
const count = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** Reads at most `n` bytes from the start of an open file. */
function head(fd: number, n: number): Buffer {
  const b = Buffer.alloc(n);
  const got = readSync(fd, b, 0, n, 0);
  return b.subarray(0, got);
}

/** The header of the file open at `fd`, for `format` (raw: dtype and shape given). */
export function readHeader(fd: number, format: IoFormat, raw?: { dtype: FileDtype; shape: number[] }): FileInfo {
  const size = fstatSync(fd).size;
  const info = format === 'raw' ? rawInfo(raw!) : parseHeader(format, head(fd, Math.min(HEAD_BYTES, size)));
  const needed = info.offset + (info.frames !== undefined ? Math.min(1, info.frames) * info.stride! : info.bytes);
  // A PNG's data is compressed: its length says nothing of the image's (checkPng reads it whole).
  if (info.frames === undefined && format !== 'png' && size < needed)
    throw new FormatError(
      `truncated: ${describe(info)} needs ${needed} bytes, the file has ${size}`,
      format === 'raw' ? 'check the file, or set dtype and shape to what it holds' : 'write the file again whole',
    );
  if (format === 'raw' && size > needed)
    throw new FormatError(`${size} bytes, but ${describe(info)} is ${needed}`, 'set dtype and shape to what the file holds');
  if (info.frames !== undefined) info.frames = Math.floor((size - info.offset) / info.stride!);
  if (info.frames === 0)
    throw new FormatError(
      `no whole frame: ${describe(info)} frames are ${info.stride} bytes, the file has ${size - info.offset} after its header`,
      'write the file again whole',
    );
  return info;
}

export const describe = (i: Pick<FileInfo, 'dtype' | 'shape'>) => `${formatShape(i.shape)} ${i.dtype}`;

function rawInfo(r: { dtype: FileDtype; shape: number[] }): FileInfo {
  return { format: 'raw', dtype: r.dtype, shape: r.shape, offset: 0, bytes: count(r.shape) * FILE_DTYPE_BYTES[r.dtype] };
}

export function parseHeader(format: IoFormat, b: Buffer): FileInfo {
  switch (format) {
    case 'npy':
      return npyHeader(b);
    case 'pgm':
    case 'ppm':
      return pnmHeader(format, b);
    case 'png':
      return pngHeader(b);
    case 'y4m':
      return y4mHeader(b);
    default:
      throw new FormatError(`format ${format} has no header`, 'give dtype and shape');
  }
}

const NPY_DTYPES: Record<string, FileDtype> = { u1: 'u8', b1: 'u8', u2: 'u16', i2: 'i16', u4: 'u32', i4: 'i32', f4: 'f32', f8: 'f64' };

function npyHeader(b: Buffer): FileInfo {
  if (b.length < 10 || b[0] !== 0x93 || b.toString('latin1', 1, 6) !== 'NUMPY')
    throw new FormatError('not a .npy file (no \\x93NUMPY magic)', 'save it with numpy.save');
  const major = b[6];
  const lenBytes = major === 1 ? 2 : 4;
  const len = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = 8 + lenBytes;
  if (b.length < start + len) throw new FormatError('truncated .npy header', 'write the file again whole');
  const dict = b.toString('latin1', start, start + len);
  const descr = /'descr'\s*:\s*'([<>|=])([a-z]\d+)'/.exec(dict);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(dict);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(dict);
  if (!descr || !fortran || !shape) throw new FormatError('a .npy header without descr, fortran_order and shape', 'save it with numpy.save');
  const dtype = NPY_DTYPES[descr[2]];
  if (!dtype)
    throw new FormatError(`.npy dtype "${descr[1]}${descr[2]}" is not one of ${Object.keys(NPY_DTYPES).join(', ')}`, "convert it (numpy: a.astype('<f4'))");
  if (descr[1] === '>' && FILE_DTYPE_BYTES[dtype] > 1) throw new FormatError('a big-endian .npy', "save it little-endian (numpy: a.astype('<f4'))");
  if (fortran[1] === 'True') throw new FormatError('a .npy in Fortran order', 'save it in C order (numpy: np.ascontiguousarray(a))');
  const dims = shape[1]
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map(Number);
  if (!dims.every((d) => Number.isInteger(d) && d > 0))
    throw new FormatError(`.npy shape (${shape[1]}) has an empty or bad extent`, 'save an array of positive extents');
  const s = dims.length ? dims : [1];
  return { format: 'npy', dtype, shape: s, offset: start + len, bytes: count(s) * FILE_DTYPE_BYTES[dtype] };
}

function pnmHeader(format: 'pgm' | 'ppm', b: Buffer): FileInfo {
  const magic = b.toString('latin1', 0, 2);
  const want = format === 'pgm' ? 'P5' : 'P6';
  if (magic !== want)
    throw new FormatError(
      `not a binary ${format.toUpperCase()} (magic "${magic.replace(/[^\x20-\x7e]/g, '?')}", expected ${want})`,
      magic === 'P2' || magic === 'P3'
        ? 'save it as binary (P5/P6), e.g. with ImageMagick: convert in.pgm -compress none out.pgm'
        : `give a ${format.toUpperCase()} file, or set format`,
    );
  let pos = 2;
  const token = (): number => {
    for (;;) {
      while (pos < b.length && (b[pos] === 0x20 || (b[pos] >= 0x09 && b[pos] <= 0x0d))) pos++;
      if (b[pos] === 0x23) while (pos < b.length && b[pos] !== 0x0a) pos++;
      else break;
    }
    const from = pos;
    while (pos < b.length && b[pos] >= 0x30 && b[pos] <= 0x39 && pos - from < 10) pos++;
    const v = Number(b.toString('latin1', from, pos));
    if (pos === from || !(v > 0)) throw new FormatError(`a ${format.toUpperCase()} header with a bad width, height or maxval`, 'write the file again');
    return v;
  };
  const w = token();
  const h = token();
  const maxval = token();
  if (maxval > 65535) throw new FormatError(`${format.toUpperCase()} maxval ${maxval} above 65535`, 'write the file again');
  pos++; // the one whitespace before the samples
  const dtype: FileDtype = maxval > 255 ? 'u16' : 'u8';
  const shape = format === 'pgm' ? [h, w] : [h, w, 3];
  return { format, dtype, shape, offset: pos, bytes: count(shape) * FILE_DTYPE_BYTES[dtype], bigEndian: dtype === 'u16' };
}

const PNG_SIGNATURE = Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]);
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 3, 4: 2, 6: 4 };

function pngHeader(b: Buffer): FileInfo {
  if (b.length < 33 || !b.subarray(0, 8).equals(PNG_SIGNATURE) || b.toString('latin1', 12, 16) !== 'IHDR')
    throw new FormatError('not a PNG file (no PNG signature and IHDR)', 'give a PNG file, or set format');
  const w = b.readUInt32BE(16);
  const h = b.readUInt32BE(20);
  const depth = b[24];
  const colour = b[25];
  const channels = PNG_CHANNELS[colour];
  if (!w || !h || !channels) throw new FormatError(`a PNG header with size ${w}x${h} and colour type ${colour}`, 'write the file again');
  if (depth !== 8 && depth !== 16 && colour !== 3) throw new FormatError(`a PNG of ${depth}-bit samples`, 'save it with 8 or 16 bits per sample');
  const dtype: FileDtype = depth === 16 ? 'u16' : 'u8';
  const shape = channels === 1 ? [h, w] : [h, w, channels];
  return { format: 'png', dtype, shape, offset: 0, bytes: count(shape) * FILE_DTYPE_BYTES[dtype] };
}

function y4mHeader(b: Buffer): FileInfo {
  const end = b.indexOf(0x0a);
  if (b.toString('latin1', 0, 10) !== 'YUV4MPEG2 ' || end < 0 || end > 1024)
    throw new FormatError('not a Y4M file (no YUV4MPEG2 header line)', 'give a Y4M file, or set format');
  const fields = b.toString('latin1', 10, end).split(' ');
  const field = (c: string) => fields.find((f) => f.startsWith(c))?.slice(1);
  const w = Number(field('W'));
  const h = Number(field('H'));
  const colour = field('C') ?? '420';
  if (!(w > 0 && h > 0 && Number.isInteger(w) && Number.isInteger(h)))
    throw new FormatError('a Y4M header without width W and height H', 'write the file again');
  if (!/^420(jpeg|paldv|mpeg2)?$/.test(colour))
    throw new FormatError(`Y4M colour space C${colour.slice(0, 16)}`, 'convert it to 8-bit 4:2:0 (ffmpeg -pix_fmt yuv420p)');
  const planes = y4mPlanes([h, w]);
  const bytes = count(planes.y) + count(planes.u) + count(planes.v);
  return { format: 'y4m', dtype: 'u8', shape: [h, w], offset: end + 1, bytes, frames: 0, stride: 6 + bytes };
}

/** Opens `file` read-only, runs `f`, closes it. */
export function withFile<T>(file: string, f: (fd: number) => T): T {
  const fd = openSync(file, 'r');
  try {
    return f(fd);
  } finally {
    closeSync(fd);
  }
}

type Sink = ArrayBufferView;
const bytesOf = (v: ArrayBufferView) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

const SOURCE: Record<FileDtype, (b: ArrayBuffer, o: number, n: number) => ArrayLike<number>> = {
  u8: (b, o, n) => new Uint8Array(b, o, n),
  u16: (b, o, n) => new Uint16Array(b, o, n),
  i16: (b, o, n) => new Int16Array(b, o, n),
  u32: (b, o, n) => new Uint32Array(b, o, n),
  i32: (b, o, n) => new Int32Array(b, o, n),
  f32: (b, o, n) => new Float32Array(b, o, n),
  f64: (b, o, n) => new Float64Array(b, o, n),
};
const MAX_OF: Partial<Record<FileDtype, number>> = { u8: 255, u16: 65535, i16: 32767, u32: 4294967295, i32: 2147483647 };

/** Values of `dtype` in `src` (little-endian, aligned copy) into `out` (its own element type), scaled to [0, 1] with `unit`. */
export function convertInto(src: Uint8Array, dtype: FileDtype, out: Sink, unit: boolean): void {
  const n = src.byteLength / FILE_DTYPE_BYTES[dtype];
  const aligned = src.byteOffset % FILE_DTYPE_BYTES[dtype] ? src.slice() : src;
  const from = SOURCE[dtype](aligned.buffer as ArrayBuffer, aligned.byteOffset, n);
  const to = out as unknown as { [i: number]: number; length: number };
  const scale = unit ? 1 / (MAX_OF[dtype] ?? 1) : 1;
  if (scale === 1) for (let i = 0; i < n; i++) to[i] = from[i];
  else for (let i = 0; i < n; i++) to[i] = from[i] * scale;
}

/** Reads `length` bytes at `position` of `fd` into `into` whole; a short read is a truncated file. */
export function readExactly(fd: number, into: Uint8Array, position: number): void {
  let at = 0;
  while (at < into.byteLength) {
    const got = readSync(fd, into, at, into.byteLength - at, position + at);
    if (got === 0) throw new FormatError(`truncated: ${into.byteLength - at} bytes missing at byte ${position + at}`, 'write the file again whole');
    at += got;
  }
}

/** The element a file dtype arrives as without conversion, when its bytes can be copied as they are. */
const SAME: Partial<Record<FileDtype, ElementType>> = { u8: 'u8', u32: 'u32', i32: 'i32', f32: 'f32' };

/**
 * One frame of the file open at `fd` into the output views (`out`, or Y4M's `y`, `u`, `v`):
 * straight into the port's memory where its element is the file's, else through a conversion.
 */
export function readFrame(fd: number, info: FileInfo, frame: number, outputs: Record<string, Sink>, element: ElementType, convert: string): void {
  if (info.format === 'png') return readPng(fd, info, outputs.out, element, convert);
  const unit = convert === 'unit';
  const base = info.offset + (info.frames !== undefined ? frame * info.stride! : 0);
  if (info.format === 'y4m') {
    const marker = Buffer.alloc(6);
    readExactly(fd, marker, base);
    if (marker.toString('latin1') !== 'FRAME\n')
      throw new FormatError(
        `frame ${frame} does not start with a plain FRAME line`,
        'write the file again without per-frame parameters (ffmpeg -f yuv4mpegpipe)',
      );
    let at = base + 6;
    for (const p of ['y', 'u', 'v'] as const) {
      const v = outputs[p];
      const n = v.byteLength / (element === 'u8' ? 1 : 4);
      if (element === 'u8') readExactly(fd, bytesOf(v), at);
      else {
        const tmp = new Uint8Array(n);
        readExactly(fd, tmp, at);
        convertInto(tmp, 'u8', v, unit);
      }
      at += n;
    }
    return;
  }
  const out = outputs.out;
  if (SAME[info.dtype] === element && !unit && !info.bigEndian) return readExactly(fd, bytesOf(out).subarray(0, info.bytes), base);
  const tmp = new Uint8Array(info.bytes);
  readExactly(fd, tmp, base);
  if (info.bigEndian) for (let i = 0; i + 1 < tmp.length; i += 2) [tmp[i], tmp[i + 1]] = [tmp[i + 1], tmp[i]];
  convertInto(tmp, info.dtype, out, unit);
}

/** Most bytes of a PNG file decoded (the decoder holds it whole). */
const MAX_PNG_FILE = 1 << 30;

function readPng(fd: number, info: FileInfo, out: Sink, element: ElementType, convert: string): void {
  const size = fstatSync(fd).size;
  if (size > MAX_PNG_FILE) throw new FormatError(`a PNG of ${size} bytes, more than ${MAX_PNG_FILE}`, 'split the image');
  const file = new Uint8Array(size);
  readExactly(fd, file, 0);
  checkPng(Buffer.from(file.buffer, file.byteOffset, file.byteLength), info);
  let png;
  try {
    png = decodePng(file);
  } catch (e) {
    throw new FormatError(`the PNG's data does not decode (${e instanceof Error ? e.message.slice(0, 120) : 'bad data'})`, 'write the file again whole');
  }
  let data = png.data;
  let channels = png.channels;
  if (png.palette) {
    const rgb = new Uint8Array(png.width * png.height * 3);
    for (let i = 0; i < png.width * png.height; i++) {
      const c = png.palette[(data as Uint8Array)[i]] ?? [0, 0, 0];
      rgb.set(c.slice(0, 3), i * 3);
    }
    data = rgb;
    channels = 3;
  }
  const got = channels === 1 ? [png.height, png.width] : [png.height, png.width, channels];
  const depth = data instanceof Uint16Array ? 'u16' : 'u8';
  if (formatShape(got) !== formatShape(info.shape) || depth !== info.dtype || data.length !== count(info.shape))
    throw new FormatError(`the PNG's data is ${formatShape(got)} ${depth}, its header says ${describe(info)}`, 'write the file again');
  const src = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (depth === element && convert === 'none') bytesOf(out).set(src);
  else convertInto(src, depth, out, convert === 'unit');
}

/**
 * A PNG's chunks against their CRCs, and its image data against its header: the decoder fills
 * what is missing without a word, so a file whose data is not what its header says is found here.
 */
function checkPng(b: Buffer, info: FileInfo): void {
  let pos = 8;
  const idat: Buffer[] = [];
  let interlaced = false;
  let depth = 8;
  let colour = 0;
  while (pos + 12 <= b.length) {
    const len = b.readUInt32BE(pos);
    const type = b.toString('latin1', pos + 4, pos + 8);
    if (pos + 12 + len > b.length)
      throw new FormatError(`truncated: the PNG's ${type.replace(/[^A-Za-z]/g, '?')} chunk runs past the end of the file`, 'write the file again whole');
    if (crc32(b.subarray(pos + 4, pos + 8 + len)) !== b.readUInt32BE(pos + 8 + len))
      throw new FormatError(`the PNG's ${type.replace(/[^A-Za-z]/g, '?')} chunk fails its CRC (the file is damaged)`, 'write the file again');
    if (type === 'IHDR') {
      depth = b[pos + 16];
      colour = b[pos + 17];
      interlaced = b[pos + 20] !== 0;
    }
    if (type === 'IDAT') idat.push(b.subarray(pos + 8, pos + 8 + len));
    if (type === 'IEND') break;
    pos += 12 + len;
  }
  if (interlaced) return;
  const [h, w] = info.shape;
  const samplesPerPixel = colour === 3 ? 1 : (PNG_CHANNELS[colour] ?? 1);
  const expected = h * (1 + Math.ceil((w * samplesPerPixel * depth) / 8));
  let got: number;
  try {
    got = inflateSync(Buffer.concat(idat), { maxOutputLength: expected + 1 }).length;
  } catch {
    throw new FormatError(`the PNG's image data does not inflate to the ${expected} bytes its header's ${w}x${h} needs`, 'write the file again whole');
  }
  if (got !== expected) throw new FormatError(`the PNG's image data is ${got} bytes, its header's ${w}x${h} needs ${expected}`, 'write the file again whole');
}

/** An 8-bit or 16-bit sample image from a port's values: u8 as is, f32 in [0, 1] scaled to 0..255, u32/i32 clamped to 0..65535. */
export function samples(v: ArrayBufferView, element: ElementType): Uint8Array | Uint16Array {
  if (element === 'u8') return bytesOf(v);
  const n = v.byteLength / 4;
  const from = v as unknown as ArrayLike<number>;
  if (element === 'f32') {
    const o = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const x = from[i];
      o[i] = x > 0 ? (x < 1 ? Math.round(x * 255) : 255) : 0;
    }
    return o;
  }
  const o = new Uint16Array(n);
  for (let i = 0; i < n; i++) o[i] = Math.max(0, Math.min(65535, from[i]));
  return o;
}

const NPY_DESCR: Record<ElementType, string> = { f32: '<f4', u32: '<u4', i32: '<i4', u8: '|u1' };

/** The bytes of one file of `format` holding `v` (element, shape): header then data. Y4M's header is `y4mStreamHeader`. */
export function encode(format: IoFormat, v: ArrayBufferView, element: ElementType, shape: readonly number[]): Uint8Array[] {
  switch (format) {
    case 'raw':
      return [bytesOf(v)];
    case 'npy': {
      const dict = `{'descr': '${NPY_DESCR[element]}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
      // Version 1.0: magic, version, header length, the dict padded with spaces to a multiple of 64, then \n.
      const total = Math.ceil((10 + dict.length + 1) / 64) * 64;
      const h = Buffer.alloc(total, 0x20);
      h[0] = 0x93;
      h.write('NUMPY', 1, 'latin1');
      h[6] = 1;
      h[7] = 0;
      h.writeUInt16LE(total - 10, 8);
      h.write(dict, 10, 'latin1');
      h[total - 1] = 0x0a;
      return [h, bytesOf(v)];
    }
    case 'pgm':
    case 'ppm': {
      const s = samples(v, element);
      const [h, w] = shape;
      const header = Buffer.from(`${format === 'pgm' ? 'P5' : 'P6'}\n${w} ${h}\n${s instanceof Uint16Array ? 65535 : 255}\n`, 'latin1');
      if (s instanceof Uint8Array) return [header, s];
      const be = Buffer.alloc(s.length * 2);
      for (let i = 0; i < s.length; i++) be.writeUInt16BE(s[i], i * 2);
      return [header, be];
    }
    case 'png': {
      const s = samples(v, element);
      return [encodePng({ width: shape[1], height: shape[0], data: s, channels: shape[2] ?? 1, depth: s instanceof Uint16Array ? 16 : 8 })];
    }
    case 'y4m':
      throw new Error('Y4M frames are appended (appendY4m)');
  }
}

/** A Y4M stream's header line for luma `shape` [height, width]. */
export const y4mStreamHeader = (shape: readonly number[]) => Buffer.from(`YUV4MPEG2 W${shape[1]} H${shape[0]} F25:1 Ip A1:1 C420jpeg\n`, 'latin1');

/** One Y4M frame from its three planes. */
export function y4mFrame(planes: { y: ArrayBufferView; u: ArrayBufferView; v: ArrayBufferView }, element: ElementType): Uint8Array[] {
  const plane = (p: ArrayBufferView) => {
    const s = samples(p, element);
    return s instanceof Uint8Array ? s : Uint8Array.from(s, (x) => Math.min(255, x));
  };
  return [Buffer.from('FRAME\n', 'latin1'), plane(planes.y), plane(planes.u), plane(planes.v)];
}

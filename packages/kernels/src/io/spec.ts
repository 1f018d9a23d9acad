import { builtinSpecs } from '../definition.js';
import { ELEMENT_BYTES, type DataType, type ElementType, type KernelSpec, type Params, type PortSpec } from '../types.js';

// `io.read` and `io.write`: the data a pipeline reads from and writes to an agent's disk, named
// `root:relative/path` (a root is a directory the agent's operator names with --data). Here only
// what the compiler and the designer need (ports, params, sizes); reading and writing files is
// the agent's (apps/agent src/io/), which gives the CPU twin its host (`setDataHost`).

export const IO_READ = 'io.read';
export const IO_WRITE = 'io.write';

export const IO_FORMATS = ['auto', 'raw', 'npy', 'pgm', 'ppm', 'png', 'y4m'] as const;
export type IoFormat = Exclude<(typeof IO_FORMATS)[number], 'auto'>;
/** Element types a file may hold (a raw file's `dtype`, a .npy header's, a PNG's depth). */
export const FILE_DTYPES = ['u8', 'u16', 'i16', 'u32', 'i32', 'f32', 'f64'] as const;
export type FileDtype = (typeof FILE_DTYPES)[number];
export const FILE_DTYPE_BYTES: Record<FileDtype, number> = { u8: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, f64: 8 };

/** Longest `path` param: a document names files, it does not carry them. */
export const MAX_IO_PATH = 1024;
/** Most dimensions of a `shape`, and most elements of one port (1 GiB of f32). */
const MAX_DIMS = 8;
const MAX_ELEMENTS = 1 << 28;

/** `48x64` (outermost first, as numpy writes a shape) -> [48, 64]; throws naming the param and an example. */
export function parseShape(text: string, param = 'shape'): number[] {
  const t = text.trim();
  const parts = t.split(/[x,]/).map((x) => x.trim());
  if (!t || parts.length > MAX_DIMS || !parts.every((x) => /^[1-9]\d{0,9}$/.test(x)))
    throw new Error(`param ${param}: "${t}" is not up to ${MAX_DIMS} positive extents, outermost first, e.g. "48x64" (48 rows of 64)`);
  const shape = parts.map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  if (n > MAX_ELEMENTS) throw new Error(`param ${param}: "${t}" has ${n} elements, more than ${MAX_ELEMENTS}`);
  return shape;
}

export const formatShape = (shape: readonly number[]) => shape.join('x');

/** The format a node's params name: `format`, or by the path's extension when `auto`; undefined when auto finds none. */
export function ioFormat(p: Params): IoFormat | undefined {
  const f = String(p.format ?? 'auto');
  if (f !== 'auto') return f as IoFormat;
  const ext = /\.([A-Za-z0-9]+)$/.exec(String(p.path ?? ''))?.[1]?.toLowerCase();
  if (ext === 'npy' || ext === 'pgm' || ext === 'ppm' || ext === 'png' || ext === 'y4m' || ext === 'raw') return ext;
  if (ext === 'bin' || ext === 'dat') return 'raw';
  return undefined;
}

/** The element a file's dtype is carried as on a port: itself where the registry has it, else the nearest that holds every value. */
export function portElement(dtype: FileDtype): ElementType {
  return dtype === 'u8' ? 'u8' : dtype === 'u16' || dtype === 'u32' ? 'u32' : dtype === 'i16' || dtype === 'i32' ? 'i32' : 'f32';
}

/** io.read's output element: the file's (widened where needed), or f32 with `convert`. */
export function readElement(p: Params): ElementType {
  if (p.convert === 'f32' || p.convert === 'unit') return 'f32';
  return portElement(readDtype(p));
}

function readDtype(p: Params): FileDtype {
  const f = ioFormat(p);
  const d = String(p.dtype ?? '');
  if (f === 'pgm' || f === 'ppm' || f === 'y4m') return (d || 'u8') as FileDtype;
  if (!d)
    throw new Error(
      `param dtype: empty; ${f === 'raw' ? 'a raw file has no header: write it (e.g. "f32")' : "pipeloom fills it from the file's header (compile, predict or run with --data), or write it"}`,
    );
  return d as FileDtype;
}

function readShape(p: Params): number[] {
  const s = String(p.shape ?? '').trim();
  if (!s)
    throw new Error(
      `param shape: empty; ${ioFormat(p) === 'raw' ? 'a raw file has no header: write it (e.g. "48x64")' : 'pipeloom fills it from the file\'s header (compile, predict or run with --data), or write it (e.g. "48x64")'}`,
    );
  return parseShape(s);
}

/** A Y4M stream's planes from the luma's shape [height, width] (4:2:0: chroma halved, rounded up). */
export function y4mPlanes(shape: readonly number[]): { y: number[]; u: number[]; v: number[] } {
  const [h, w] = shape;
  const c = [Math.ceil(h / 2), Math.ceil(w / 2)];
  return { y: [h, w], u: c, v: [...c] };
}

/** A node whose path is still empty (the palette's, the defaults): one stand-in port, refused by pipeloom and by the agent's check. */
const unset = (p: Params) => !String(p.path ?? '');

function checkPath(p: Params): void {
  const path = String(p.path ?? '');
  if (path.length > MAX_IO_PATH) throw new Error(`param path: ${path.length} characters, more than ${MAX_IO_PATH}`);
  if (!ioFormat(p)) throw new Error(`param format: "auto" finds no format from "${path}"'s extension; set format (${IO_FORMATS.slice(1).join(', ')})`);
}

function readPorts(p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  if (unset(p)) return { inputs: [], outputs: [{ name: 'out', type: anyType }] };
  checkPath(p);
  checkFrames(p);
  if (ioFormat(p) === 'y4m') {
    const element = readElement(p);
    const planes = y4mPlanes(readShape(p));
    if (planes.y.length !== 2) throw new Error(`param shape: a Y4M stream's shape is its luma's height x width, e.g. "48x64"`);
    const plane = (name: 'y' | 'u' | 'v'): PortSpec => ({ name, type: () => ({ kind: kindOf(p, 'image'), element, shape: stacked(p, planes[name]) }) });
    return { inputs: [], outputs: [plane('y'), plane('u'), plane('v')] };
  }
  return { inputs: [], outputs: [{ name: 'out', type: readType }] };
}

const readType = (p: Params): DataType => {
  const shape = readShape(p);
  const f = ioFormat(p);
  if (f === 'ppm' && (shape.length !== 3 || shape[2] !== 3)) throw new Error(`param shape: a PPM image is height x width x 3, not "${formatShape(shape)}"`);
  if (f === 'pgm' && shape.length !== 2) throw new Error(`param shape: a PGM image is height x width, not "${formatShape(shape)}"`);
  return { kind: kindOf(p, f === 'pgm' || f === 'ppm' || f === 'png' ? 'image' : 'array'), element: readElement(p), shape: stacked(p, shape) };
};

/** Frames per firing (`frames`): above 1, a port holds that many consecutive frames, outermost. */
export const framesOf = (p: Params) => Math.max(1, Math.floor(Number(p.frames ?? 1)) || 1);
const stacked = (p: Params, shape: number[]) => (framesOf(p) > 1 ? [framesOf(p), ...shape] : shape);

function checkFrames(p: Params): void {
  if (framesOf(p) > 1 && ioFormat(p) !== 'y4m' && !/%(0\d)?d/.test(String(p.path ?? '')))
    throw new Error('param frames: more than one frame per firing needs a sequence (a %0Nd in the path) or a Y4M video');
}

/** The port's data kind: the `kind` param, else what the format holds. */
const kindOf = (p: Params, otherwise: string) => String(p.kind ?? '').trim() || otherwise;

const WRITE_ELEMENTS: readonly ElementType[] = ['f32', 'u8', 'u32', 'i32'];

function writePorts(p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  if (unset(p)) return { inputs: [{ name: 'in', type: anyType }], outputs: [] };
  checkPath(p);
  const element = String(p.dtype ?? 'f32') as ElementType;
  if (!WRITE_ELEMENTS.includes(element)) throw new Error(`param dtype: "${element}" is not one of ${WRITE_ELEMENTS.join(', ')}`);
  const shape = String(p.shape ?? '').trim()
    ? parseShape(String(p.shape))
    : (() => {
        throw new Error('param shape: empty; pipeloom fills it from the node feeding it (compile, predict or run), or write it (e.g. "48x64")');
      })();
  const f = ioFormat(p);
  checkFrames(p);
  if (framesOf(p) > 1 && p.when === 'last')
    throw new Error('param frames: more than one frame per firing is written as a sequence (when "each") or a Y4M (when "append")');
  if (f === 'y4m') {
    if (p.when !== 'append') throw new Error('param when: a Y4M file is written with when "append" (one frame per iteration)');
    const planes = y4mPlanes(shape);
    const plane = (name: 'y' | 'u' | 'v'): PortSpec => ({ name, type: () => ({ kind: kindOf(p, 'image'), element, shape: stacked(p, planes[name]) }) });
    return { inputs: [plane('y'), plane('u'), plane('v')], outputs: [] };
  }
  if (p.when === 'append') throw new Error(`param when: "append" writes Y4M only; use "each" (a pattern, one file per iteration) or "last"`);
  if ((f === 'png' || f === 'pgm') && shape.length !== 2 && !(shape.length === 3 && shape[2] <= 4 && f === 'png'))
    throw new Error(`param shape: a ${f.toUpperCase()} image is height x width${f === 'png' ? ' (or x channels, 1 to 4)' : ''}, not "${formatShape(shape)}"`);
  if (f === 'ppm' && (shape.length !== 3 || shape[2] !== 3)) throw new Error(`param shape: a PPM image is height x width x 3, not "${formatShape(shape)}"`);
  return { inputs: [{ name: 'in', type: () => ({ kind: kindOf(p, 'array'), element, shape: stacked(p, shape) }) }], outputs: [] };
}

const portBytes = (ports: { inputs: PortSpec[]; outputs: PortSpec[] }, p: Params) =>
  [...ports.inputs, ...ports.outputs].reduce((n, port) => {
    const t = port.type(p);
    return n + t.shape.reduce((a, b) => a * b, 1) * ELEMENT_BYTES[t.element];
  }, 0);

/** A port stand-in for the palette and the docs (the node's params give the real ones). */
const anyType = (): DataType => ({ kind: 'array', element: 'f32', shape: [1] });

const pathParam = (what: string) => ({
  type: 'string' as const,
  default: '',
  description: `${what} as root:relative/path, a root the agent serves (pipeloom agent --data NAME=DIR). A sequence names its frames with one %0Nd (frames/%05d.png: iteration k is frame k)`,
});
const formatParam = {
  type: 'enum' as const,
  default: 'auto',
  values: [...IO_FORMATS],
  description: 'auto: by the extension (.raw/.bin, .npy, .pgm, .ppm, .png, .y4m)',
};

/** Frames per firing, the same bounds for a source (`reads`) and a sink (`writes`). */
const framesParam = (verb: 'reads' | 'writes', what: string) => ({
  type: 'int' as const,
  default: 1,
  min: 1,
  max: 4096,
  unit: 'frames',
  description: `Frames per firing${what}: above 1, firing k ${verb} frames k x frames .. k x frames + frames - 1, stacked outermost on the port`,
});

export const ioSpecs: KernelSpec[] = builtinSpecs([
  {
    id: IO_READ,
    title: 'Read data',
    category: 'Data in and out',
    description:
      "Reads a file from a data root of the agent its node runs on, on a CPU PE: raw binary (dtype and shape as params), .npy, PGM/PPM/PNG images, an image sequence by pattern, or a Y4M video (4:2:0: planes y, u, v). Shape and dtype come from the file's header where it has one (pipeloom fills them at compile time with --data; the agent refuses a run whose params disagree with the file).",
    params: {
      path: pathParam('The file'),
      format: formatParam,
      dtype: {
        type: 'enum',
        default: '',
        values: ['', ...FILE_DTYPES],
        description: 'Element type in the file (raw: required; else from the header). u16 and i16 arrive as u32 and i32, f64 as f32',
      },
      shape: {
        type: 'string',
        default: '',
        description: 'Extents, outermost first ("48x64": 48 rows of 64; a PPM "48x64x3"; Y4M: the luma). Raw: required; else from the header',
      },
      kind: {
        type: 'string',
        default: '',
        description: 'The data kind its consumers take (e.g. image, volume, sinogram; empty: image for images, array otherwise)',
      },
      convert: {
        type: 'enum',
        default: 'none',
        values: ['none', 'f32', 'unit'],
        description: "none: the file's values; f32: as f32; unit: as f32 divided by the integer type's largest value (images in [0, 1])",
      },
      frames: framesParam('reads', ' of a sequence or video'),
      end: {
        type: 'enum',
        default: 'stop',
        values: ['stop', 'loop', 'hold'],
        description:
          'A sequence or video with fewer frames than iterations: stop (the run is refused), loop (from the first frame again) or hold (the last frame repeats)',
      },
    },
    inputs: [],
    outputs: [{ name: 'out', description: "The file's data (Y4M: y, u, v)", type: anyType }],
    ports: readPorts,
    deterministic: true,
    cost: (p) => ({ flops: 0, bytes: portBytes(readPorts(p), p) }),
  },
  {
    id: IO_WRITE,
    title: 'Write data',
    category: 'Data in and out',
    description:
      'Writes its input to a data root of the agent its node runs on, on a CPU PE: .npy (with a header), raw, PNG/PGM/PPM (f32 in [0, 1] scaled to 0..255), or Y4M frames appended. Each file is written whole (a temporary file, then renamed) and never outside its root.',
    params: {
      path: pathParam('The file written'),
      format: formatParam,
      when: {
        type: 'enum',
        default: 'each',
        values: ['each', 'last', 'append'],
        description:
          "each: one file per iteration (the path's %0Nd is the iteration); last: one file, the last iteration's; append: Y4M, one frame per iteration",
      },
      dtype: {
        type: 'enum',
        default: 'f32',
        values: [...WRITE_ELEMENTS],
        description: "The input's element type (pipeloom fills it from the node feeding it)",
      },
      shape: { type: 'string', default: '', description: "One frame's extents, outermost first (pipeloom fills it from the node feeding it)" },
      kind: { type: 'string', default: '', description: "The input's data kind (pipeloom fills it from the node feeding it; empty: array)" },
      frames: framesParam('writes', ', to a sequence (when each) or a Y4M (append)'),
    },
    inputs: [{ name: 'in', description: 'The data written (Y4M: y, u, v)', type: anyType }],
    outputs: [],
    ports: writePorts,
    stateful: true,
    cost: (p) => ({ flops: 0, bytes: portBytes(writePorts(p), p) }),
  },
]);

import { closeSync, ftruncateSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  IO_READ,
  IO_WRITE,
  framesOf,
  ioFormat,
  KernelError,
  parseShape,
  readElement,
  type CpuFiring,
  type DataHost,
  type ElementType,
  type FiringReport,
  type IoFormat,
} from '@pipeloom/kernels';
import { encode, readFrame, readHeader, withFile, y4mFrame, y4mStreamHeader, type FileInfo } from './formats.js';
import { DataError, disagreement, frameName, frameOf, inspect, isSequence, naming, type Frames } from './files.js';
import { DATA_ENV, DATA_QUOTA_ENV, realFile, splitDataPath, writeDir, type DataRoot } from './roots.js';

// The agent's data host: what io.read and io.write firings do on a PE thread (the kernels'
// twins call it). Reads go straight into the port's memory where the file's element is the
// port's; each file written is whole (a temporary file in its directory, then renamed), and
// a Y4M stream grows by whole frames (a frame that fails to write is cut off again).

interface SourceState {
  frames?: Frames;
  /** A single file's real path (inside its root). */
  real?: string;
  /** A Y4M stream's or a single file's header, read at the first firing. */
  info?: FileInfo;
}

interface SinkState {
  /** Bytes of the files it has left (a `last` file counted once), and bytes written in all (the quota's). */
  bytes: number;
  written: number;
  /** The size of the file a `last` sink rewrites. */
  lastFile: number;
  files: number;
  iterations: number;
  /** Real directories already checked and made, by the directory the path names. */
  dirs: Map<string, string>;
  /** Y4M append: the stream's whole length so far. */
  stream?: { length: number };
}

const fail = (kernel: string, e: unknown): never => {
  if (e instanceof DataError) throw new KernelError(kernel, e.message);
  throw e;
};

export class AgentDataHost implements DataHost {
  constructor(
    readonly roots: readonly DataRoot[],
    /** Most bytes one sink writes in one run (--data-quota); 0 for none. */
    readonly quota = 0,
  ) {}

  read(f: CpuFiring): void {
    try {
      this.readOne(f);
    } catch (e) {
      fail(IO_READ, e);
    }
  }

  private readOne(f: CpuFiring): void {
    const p = f.params;
    const written = String(p.path);
    const s = f.state as SourceState & { ready?: boolean };
    const format = ioFormat(p) as IoFormat;
    if (!s.ready) {
      // The first firing: the header checked against the params (the agent's deploy check did
      // so too; a file may change between the two).
      const seen = inspect(this.roots, p);
      const differs = disagreement(p, seen.info);
      if (differs) throw new DataError(written, differs.problem, differs.hint);
      s.frames = seen.frames;
      s.info = seen.info;
      s.ready = true;
    }
    const { root, file } = splitDataPath(this.roots, written);
    const element = readElement(p);
    const convert = String(p.convert ?? 'none');
    const end = String(p.end ?? 'stop');
    const n = framesOf(p);
    if (s.frames) {
      const seq = s.frames;
      for (let j = 0; j < n; j++) {
        const want = f.iteration * n + j;
        const k = frameOf(want, seq.count, end);
        if (k === undefined)
          throw new DataError(
            written,
            `the sequence has ${seq.count} frames; iteration ${f.iteration} asks for frame ${seq.first + want}`,
            'set end to loop or hold, add frames, or run fewer iterations',
          );
        const name = frameName(file, seq.first + k);
        naming(frameName(written, seq.first + k), root.name, () =>
          withFile(realFile(root, written, name), (fd) => {
            const info = readHeader(fd, format, format === 'raw' ? { dtype: s.info!.dtype, shape: s.info!.shape } : undefined);
            const differs = disagreement({ ...p, shape: p.shape || s.info!.shape.join('x'), dtype: p.dtype || s.info!.dtype }, info);
            if (differs) throw new DataError(frameName(written, seq.first + k), differs.problem, 'make every frame of the sequence the same size and type');
            readFrame(fd, info, 0, part(f.outputs, j, n), element, convert);
          }),
        );
      }
      return;
    }
    // The file's real path, checked against the root once (the first firing); a single file is
    // read again at each firing (it may be rewritten between them), not looked up again.
    s.real ??= naming(written, root.name, () => realFile(root, written, file));
    naming(written, root.name, () =>
      withFile(s.real!, (fd) => {
        let info = s.info!;
        if (info.frames === undefined) return readFrame(fd, info, 0, f.outputs, element, convert);
        for (let j = 0; j < n; j++) {
          const want = f.iteration * n + j;
          // A stream growing while it is read: its frames counted again when the last is passed.
          if (want >= info.frames!) info = s.info = readHeader(fd, format);
          const k = frameOf(want, info.frames!, end);
          if (k === undefined)
            throw new DataError(
              written,
              `the video has ${info.frames} frames; iteration ${f.iteration} asks for frame ${want}`,
              'set end to loop or hold, or run fewer iterations',
            );
          readFrame(fd, info, k, part(f.outputs, j, n), element, convert);
        }
      }),
    );
  }

  write(f: CpuFiring): FiringReport {
    try {
      return this.writeOne(f);
    } catch (e) {
      return fail(IO_WRITE, e);
    }
  }

  private writeOne(f: CpuFiring): FiringReport {
    const p = f.params;
    const written = String(p.path);
    const s = f.state as Partial<SinkState>;
    s.bytes ??= 0;
    s.written ??= 0;
    s.lastFile ??= 0;
    s.files ??= 0;
    s.dirs ??= new Map();
    s.iterations ??= 0;
    const sink = s as SinkState;
    const format = ioFormat(p) as IoFormat;
    const element = String(p.dtype ?? 'f32') as ElementType;
    const when = String(p.when ?? 'each');
    const shape = parseShape(String(p.shape));
    const { root, file } = naming(written, undefined, () => splitDataPath(this.roots, written));
    if (root.readOnly)
      throw new DataError(written, `data root "${root.name}" is read-only on this agent (--data-ro)`, 'write to a root the agent serves with --data');
    const n = framesOf(p);
    for (let j = 0; j < n; j++) {
      const at = f.iteration * n + j;
      const name = when === 'each' && isSequence(written) ? frameName(file, at) : file;
      const shown = when === 'each' && isSequence(written) ? frameName(written, at) : written;
      this.writeFrame(sink, root, name, shown, format, when, shape, element, part(f.inputs, j, n));
    }
    sink.iterations++;
    return { ok: true, values: { path: written, bytes: sink.bytes, files: sink.files, iterations: sink.iterations } };
  }

  /** One frame of a sink's input, as one file (or one Y4M frame). */
  private writeFrame(
    sink: SinkState,
    root: DataRoot,
    name: string,
    shown: string,
    format: IoFormat,
    when: string,
    shape: number[],
    element: ElementType,
    inputs: Record<string, ArrayBufferView>,
  ): void {
    naming(shown, root.name, () => {
      // The directory checked against the root and made once per sink (a pattern's frames share it).
      const at = dirname(name);
      let dir = sink.dirs.get(at);
      if (dir === undefined) {
        dir = writeDir(root, shown, name);
        mkdirSync(dir, { recursive: true });
        if (sink.dirs.size < 64) sink.dirs.set(at, dir);
      }
      const target = join(dir, basename(name));
      if (format === 'y4m') this.appendFrame(sink, target, shown, shape, inputs, element);
      else this.whole(sink, target, shown, encode(format, inputs.in, element, shape), when === 'each' || sink.files === 0);
    });
  }

  private charge(sink: SinkState, shown: string, bytes: number): void {
    if (this.quota && sink.written + bytes > this.quota)
      throw new DataError(
        shown,
        `no space: the sink has written ${sink.written} bytes and this file needs ${bytes} more, past the agent's data quota of ${this.quota} bytes (--data-quota)`,
        'free space, raise --data-quota, or write fewer or smaller files',
      );
  }

  /** `parts` written as one file whole: a temporary file beside it, then renamed over it. */
  private whole(sink: SinkState, target: string, shown: string, parts: Uint8Array[], newFile: boolean): void {
    const bytes = parts.reduce((n, x) => n + x.byteLength, 0);
    this.charge(sink, shown, bytes);
    const temp = join(target, '..', `.${basename(target)}.${randomBytes(4).toString('hex')}.tmp`);
    const fd = openSync(temp, 'wx', 0o644);
    try {
      // Whole as readers see it (the rename); not fsynced: durability across a power cut is the
      // filesystem's, and a sync per file would cost sinks most of the disk's throughput.
      for (const x of parts) writeAll(fd, x);
      closeSync(fd);
    } catch (e) {
      closeSync(fd);
      unlinkSync(temp);
      throw e;
    }
    renameSync(temp, target);
    sink.written += bytes;
    sink.bytes += newFile ? bytes : bytes - sink.lastFile;
    sink.lastFile = bytes;
    if (newFile) sink.files++;
  }

  /** One Y4M frame appended: the stream is made whole with its first frame, and a frame that fails is cut off. */
  private appendFrame(sink: SinkState, target: string, shown: string, shape: number[], inputs: Record<string, ArrayBufferView>, element: ElementType): void {
    const frame = y4mFrame({ y: inputs.y, u: inputs.u, v: inputs.v }, element);
    if (!sink.stream) {
      const header = y4mStreamHeader(shape);
      this.whole(sink, target, shown, [header, ...frame], true);
      sink.stream = { length: header.byteLength + frame.reduce((n, x) => n + x.byteLength, 0) };
      return;
    }
    const bytes = frame.reduce((n, x) => n + x.byteLength, 0);
    this.charge(sink, shown, bytes);
    const st = sink.stream;
    // Opened per frame: a PE thread's end closes no file, and a run must not leave one open.
    const fd = openSync(target, 'r+');
    try {
      let at = st.length;
      for (const x of frame) at += writeAll(fd, x, at);
    } catch (e) {
      ftruncateSync(fd, st.length);
      throw e;
    } finally {
      closeSync(fd);
    }
    st.length += bytes;
    sink.bytes += bytes;
    sink.written += bytes;
  }
}

/** Writes all of `x` at `position` (or the file's position); returns the bytes written. */
function writeAll(fd: number, x: Uint8Array, position?: number): number {
  let at = 0;
  while (at < x.byteLength) at += writeSync(fd, x, at, x.byteLength - at, position === undefined ? null : position + at);
  return at;
}

/** The data host of a PE thread, from what the agent process put in its environment (DATA_ENV). */
export function dataHostFromEnv(env: NodeJS.ProcessEnv = process.env): AgentDataHost {
  let roots: DataRoot[] = [];
  try {
    const parsed = JSON.parse(env[DATA_ENV] ?? '[]') as unknown;
    if (Array.isArray(parsed)) roots = parsed.filter((r): r is DataRoot => typeof r?.name === 'string' && typeof r?.dir === 'string');
  } catch {
    roots = [];
  }
  const quota = Number(env[DATA_QUOTA_ENV] ?? 0);
  return new AgentDataHost(roots, Number.isFinite(quota) && quota > 0 ? quota : 0);
}

/** Frame j of n of each port's view (the port holds n frames, outermost): a view of the same type over its part. */
function part<T extends Record<string, ArrayBufferView>>(views: T, j: number, n: number): T {
  if (n === 1) return views;
  const out: Record<string, ArrayBufferView> = {};
  for (const [port, v] of Object.entries(views)) {
    const per = v.byteLength / n;
    const View = v.constructor as new (b: ArrayBufferLike, o: number, l: number) => ArrayBufferView;
    out[port] = new View(v.buffer, v.byteOffset + j * per, per / ((v as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT ?? 1));
  }
  return out as T;
}

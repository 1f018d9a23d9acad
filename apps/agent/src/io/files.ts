import { existsSync } from 'node:fs';
import { formatShape, ioFormat, parseShape, type FileDtype, type IoFormat, type Params } from '@pipeloom/kernels';
import { describe, FormatError, readHeader, withFile, type FileInfo } from './formats.js';
import { DataPathError, realFile, splitDataPath, type DataRoot } from './roots.js';

// What one io node's path names on this agent's disk: the file (or a sequence's frame) an
// iteration reads, its header, and whether the params agree with it. The PE threads read
// through it, the agent checks a deploy with it, and the CLI fills shapes from it.

/** Most frames of a sequence counted (to know where `loop` and `hold` turn). */
export const MAX_FRAMES = 1_000_000;

/** A sequence's `%0Nd` (or `%d`): the one number in a path. */
const PATTERN = /%(0\d)?d/;

export const isSequence = (path: string) => PATTERN.test(path);

/** The path of frame `n` of a pattern. */
export function frameName(path: string, n: number): string {
  return path.replace(PATTERN, (m, width: string | undefined) => String(n).padStart(width ? Number(width.slice(1)) : 0, '0'));
}

/** What is wrong with a node's data, as the message names it: the path as written, what is wrong, the fix. */
export class DataError extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
    readonly hint: string,
  ) {
    super(`${path}: ${problem}; ${hint}`);
    this.name = 'DataError';
  }
}

/** Runs `f`, turning its path, format and file-system errors into a DataError naming `written`. */
export function naming<T>(written: string, root: string | undefined, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof DataError) throw e;
    if (e instanceof DataPathError || e instanceof FormatError) throw new DataError(written, e.message, e.hint);
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new DataError(written, `no such file in data root "${root}"`, 'check the name, or put the file there');
    if (code === 'EACCES' || code === 'EPERM') throw new DataError(written, "not readable by the agent's user", "fix the file's permissions");
    if (code === 'EISDIR') throw new DataError(written, 'is a directory', 'name a file');
    if (code === 'ENOSPC' || code === 'EDQUOT')
      throw new DataError(
        written,
        `no space left on the disk of data root "${root}" (${code})`,
        'free space, or write to another root; the files written before stay whole',
      );
    if (code === 'EROFS') throw new DataError(written, `the filesystem of data root "${root}" is read-only`, 'write to another root');
    if (code === 'EFBIG') throw new DataError(written, `too large for the filesystem of data root "${root}"`, 'write smaller files');
    throw e;
  }
}

/** A source's sequence: the first frame's number and how many follow without a gap. */
export interface Frames {
  first: number;
  count: number;
}

/** The frames of a pattern on disk (from 0, or from 1 when there is no frame 0), counted up to `most`. */
export function countFrames(root: DataRoot, written: string, file: string, most = MAX_FRAMES): Frames {
  const first = existsSync(frameName(file, 0)) ? 0 : 1;
  let n = 0;
  while (n < most && existsSync(frameName(file, first + n))) n++;
  if (!n)
    throw new DataError(
      written,
      `no frame of the sequence in data root "${root.name}" (looked for ${frameName(written, 0)} and ${frameName(written, 1)})`,
      'check the pattern, or put the frames there',
    );
  return { first, count: n };
}

/** The frame an iteration reads under `end`: loop from the first, hold the last, or stop (undefined: past the end). */
export function frameOf(iteration: number, frames: number, end: string): number | undefined {
  if (iteration < frames) return iteration;
  if (end === 'loop') return iteration % frames;
  if (end === 'hold') return frames - 1;
  return undefined;
}

/** The source's file header as the params name it (a sequence's first frame), checked for a path that leaves its root. */
export function inspect(roots: readonly DataRoot[], params: Params, most = MAX_FRAMES): { info: FileInfo; file: string; root: DataRoot; frames?: Frames } {
  const written = String(params.path ?? '');
  const format = ioFormat(params) as IoFormat;
  let rootName: string | undefined;
  return naming(written, undefined, () => {
    const { root, file } = splitDataPath(roots, written);
    rootName = root.name;
    return naming(written, rootName, () => {
      // A sequence's frames counted up to `most` (the agent's deploy check counts what the run needs, on its main thread).
      const frames = isSequence(written) ? countFrames(root, written, file, most) : undefined;
      const first = frames ? frameName(file, frames.first) : file;
      const real = realFile(root, written, first);
      const raw = format === 'raw' ? { dtype: String(params.dtype) as FileDtype, shape: parseShape(String(params.shape)) } : undefined;
      const info = withFile(real, (fd) => readHeader(fd, format, raw));
      return { info, file, root, frames };
    });
  });
}

/**
 * What a source's params say against its file: undefined when they agree (or leave shape and
 * dtype out), else the message's problem and fix.
 */
export function disagreement(params: Params, info: FileInfo): { problem: string; hint: string } | undefined {
  const shape = String(params.shape ?? '').trim();
  const dtype = String(params.dtype ?? '');
  const shapeOk = !shape || formatShape(parseShape(shape)) === formatShape(info.shape);
  const dtypeOk = !dtype || dtype === info.dtype;
  if (shapeOk && dtypeOk) return undefined;
  const said = [shape && !shapeOk ? formatShape(parseShape(shape)) : '', dtype && !dtypeOk ? dtype : ''].filter(Boolean).join(' ');
  const set = [!shapeOk ? `shape to ${formatShape(info.shape)}` : '', !dtypeOk ? `dtype to ${info.dtype}` : ''].filter(Boolean).join(' and ');
  return { problem: `is ${describe(info)}, the document says ${said}`, hint: `set ${set} or leave ${!shapeOk && !dtypeOk ? 'them' : 'it'} out` };
}

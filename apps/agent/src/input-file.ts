import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { formatBytes, MAX_DOCUMENT_BYTES } from '@pipeloom/core';

// Every file the CLI reads as input (a document, a calibration, PREESM's files) is read through
// here: its size is checked before a byte is read, and the read stops one byte past the limit, so
// a file that grows meanwhile, or a device such as /dev/zero, cannot make it read more.

/** The environment variable that raises (or lowers) the limit, in bytes. */
export const MAX_BYTES_ENV = 'PIPELOOM_MAX_DOCUMENT_BYTES';

/** The limit on an input file: core's MAX_DOCUMENT_BYTES, or the environment's number of bytes. */
export function inputByteLimit(): { ok: true; limit: number } | { ok: false; message: string } {
  const raw = process.env[MAX_BYTES_ENV];
  if (raw === undefined || raw === '') return { ok: true, limit: MAX_DOCUMENT_BYTES };
  const limit = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(limit) || limit < 1)
    return { ok: false, message: `${MAX_BYTES_ENV} must be a whole number of bytes, not "${raw.slice(0, 40)}"` };
  return { ok: true, limit };
}

/** Why a file was not read: `tooLarge` with its size and the limit (`hint`: how to raise it), else why it cannot be read. */
export type InputFile = { ok: true; text: string } | { ok: false; tooLarge: boolean; reason: string; hint?: string };

/** One line naming the file: "doc.json is 524288126 bytes (500 MiB), more than …; split it, or …". */
export function inputFileMessage(file: string, r: Extract<InputFile, { ok: false }>): string {
  return r.tooLarge ? `${file} ${r.reason}; ${r.hint}` : `cannot read ${file}: ${r.reason}`;
}

/** The file's text (UTF-8), or why it was not read. */
export function readInputFile(file: string, limit: number): InputFile {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    return { ok: false, tooLarge: false, reason: why(e) };
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return { ok: false, tooLarge: false, reason: 'it is a directory' };
    if (stat.size > limit) return tooLarge(`is ${stat.size} bytes (${formatBytes(stat.size)})`, limit);
    // A regular file is read in one go; anything else (a pipe, a device) grows the buffer as it comes.
    let buf = Buffer.allocUnsafe(Math.min(limit + 1, Math.max(stat.size + 1, 64 * 1024)));
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        if (length > limit) return tooLarge(`has more than ${limit} bytes`, limit);
        const bigger = Buffer.allocUnsafe(Math.min(limit + 1, buf.length * 2));
        buf.copy(bigger, 0, 0, length);
        buf = bigger;
      }
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > limit) return tooLarge(`has more than ${limit} bytes`, limit);
    return { ok: true, text: buf.toString('utf8', 0, length) };
  } catch (e) {
    return { ok: false, tooLarge: false, reason: why(e) };
  } finally {
    closeSync(fd);
  }
}

function tooLarge(size: string, limit: number): InputFile {
  return {
    ok: false,
    tooLarge: true,
    reason: `${size}, more than the limit of ${limit} bytes (${formatBytes(limit)})`,
    hint: `split it, or raise the limit with ${MAX_BYTES_ENV}=<bytes>`,
  };
}

function why(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT'
    ? 'no such file'
    : code === 'EISDIR'
      ? 'it is a directory'
      : code === 'EACCES'
        ? 'permission denied'
        : e instanceof Error
          ? e.message
          : String(e);
}

import { writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { toChromeTrace, toPajeTrace, toTraceCsv, type ImplementationGraph, type TraceEvent, type TraceMetadata } from '@pipeloom/core';

// `--trace FILE [--trace-format F]` of `pipeloom run` and `pipeloom predict`: which format a
// trace file is written in, and writing it. One place, so both commands take the same names.

export const TRACE_FORMATS = ['chrome', 'paje', 'csv'] as const;
export type TraceFormat = (typeof TRACE_FORMATS)[number];

/** The usage lines of `--trace-format`, the description at `column` as the command's other flags. */
export function traceFormatUsage(column: number): string {
  const pad = ' '.repeat(column);
  return `--trace-format chrome|paje|csv
${pad}the --trace file's format (default: from its extension: .paje or
${pad}.trace Paje for ViTE and pj_dump, .csv one row per event, else
${pad}Chrome Trace Event JSON for Perfetto)`;
}

/** Where each format opens, for the line that says the file was written. */
export const TRACE_VIEWER: Record<TraceFormat, string> = {
  chrome: 'open it in https://ui.perfetto.dev',
  paje: 'open it in ViTE, or read it with pj_dump',
  csv: 'one row per event, for pandas or R',
};

/**
 * The format of the trace file `file`: `--trace-format` when given, else the file's
 * extension. Undefined (after a message naming the flag) for an unknown format.
 */
export function traceFormat(command: string, file: string | undefined, flag: string | boolean | undefined): TraceFormat | undefined {
  if (flag !== undefined) {
    if (file === undefined) {
      console.error(`pipeloom ${command}: --trace-format says how to write the --trace file: give --trace FILE too`);
      return undefined;
    }
    if (typeof flag === 'string' && (TRACE_FORMATS as readonly string[]).includes(flag)) return flag as TraceFormat;
    console.error(`pipeloom ${command}: --trace-format must be one of ${TRACE_FORMATS.join(', ')}, not "${String(flag).slice(0, 40)}"`);
    return undefined;
  }
  const ext = extname(file ?? '').toLowerCase();
  return ext === '.paje' || ext === '.trace' ? 'paje' : ext === '.csv' ? 'csv' : 'chrome';
}

/** Writes the events to `file` in `format` (errors are the caller's to report). */
export async function writeTraceFile(
  file: string,
  format: TraceFormat,
  events: readonly TraceEvent[],
  ig: ImplementationGraph | undefined,
  metadata: TraceMetadata,
): Promise<void> {
  const text =
    format === 'paje' ? toPajeTrace(events, ig, metadata) : format === 'csv' ? toTraceCsv(events) : JSON.stringify(toChromeTrace(events, ig, metadata));
  await writeFile(file, text);
}

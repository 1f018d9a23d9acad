import { inputByteLimit, inputFileMessage, readInputFile } from '../input-file.js';
import { formatDiagnostic, overrideParams, parseDocument, type Diagnostic, type ProjectDocument } from '@pipeloom/core';
import { fillIo } from '../io/fill.js';
import { parseDataFlags, type DataRoot } from '../io/roots.js';

// Reads and parses a project document for a command. Exit codes of every command:
// 0 ok, 1 other failure (unreadable file, bad option), 2 invalid or too large document.

export const EXIT = { ok: 0, failure: 1, invalid: 2 } as const;

/**
 * Reads and parses the document, with the values of `--param NAME=VALUE` (repeatable) in place of
 * its params'. A malformed --param and one naming no parameter are reported; both exit 2.
 */
export async function readDocument(
  command: string,
  file: string | undefined,
  params?: unknown,
  data?: unknown,
): Promise<{ ok: true; doc: ProjectDocument; roots?: DataRoot[] } | { ok: false; code: number; diagnostics?: Diagnostic[] }> {
  const overrides = paramFlags(command, params);
  if (!overrides) return { ok: false, code: EXIT.invalid };
  if (!file) {
    console.error(`pipeloom ${command}: missing the project document (pipeloom ${command} FILE)`);
    return { ok: false, code: EXIT.failure };
  }
  const max = inputByteLimit();
  if (!max.ok) {
    console.error(`pipeloom ${command}: ${max.message}`);
    return { ok: false, code: EXIT.failure };
  }
  const read = readInputFile(file, max.limit);
  if (!read.ok) {
    console.error(`pipeloom ${command}: ${inputFileMessage(file, read)}`);
    return { ok: false, code: read.tooLarge ? EXIT.invalid : EXIT.failure };
  }
  const parsed = parseDocument(read.text, { maxBytes: max.limit });
  if (!parsed.ok) {
    printDiagnostics(parsed.diagnostics);
    return { ok: false, code: EXIT.invalid, diagnostics: parsed.diagnostics };
  }
  const overridden = overrideParams(parsed.doc, overrides);
  if (overridden.diagnostics.length) {
    printDiagnostics(overridden.diagnostics);
    return { ok: false, code: EXIT.invalid, diagnostics: overridden.diagnostics };
  }
  // io nodes: shapes from the files' headers (--data) and from the nodes feeding the sinks.
  let roots: DataRoot[] | undefined;
  if (data !== undefined) {
    const parsed = parseDataFlags(Array.isArray(data) ? (data as string[]) : [String(data)]);
    if ('error' in parsed) {
      console.error(`pipeloom ${command}: ${parsed.error}`);
      return { ok: false, code: EXIT.invalid };
    }
    roots = parsed.roots;
  }
  const filled = fillIo(overridden.doc, roots);
  if (filled.diagnostics.length) {
    printDiagnostics(filled.diagnostics);
    return { ok: false, code: EXIT.invalid, diagnostics: filled.diagnostics };
  }
  return { ok: true, doc: filled.doc, ...(roots ? { roots } : {}) };
}

/** `--param` values as name -> number; undefined after printing what is malformed. */
function paramFlags(command: string, flags: unknown): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  for (const flag of Array.isArray(flags) ? (flags as unknown[]) : flags === undefined ? [] : [flags]) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(String(flag));
    const value = m ? Number(m[2]) : NaN;
    if (!m || m[2].trim() === '' || !Number.isFinite(value)) {
      console.error(`pipeloom ${command}: --param must be NAME=NUMBER (e.g. --param N=4), not "${String(flag)}"`);
      return undefined;
    }
    if (Object.hasOwn(out, m[1])) {
      console.error(`pipeloom ${command}: --param ${m[1]} is given twice`);
      return undefined;
    }
    Object.defineProperty(out, m[1], { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** A bad document's diagnostics for `--format json` on stdout: `{ ok: false, diagnostics: [{ severity, path, message, hint }] }`. */
export function diagnosticsJson(diagnostics: readonly Diagnostic[]): string {
  return JSON.stringify(
    { ok: false, diagnostics: diagnostics.map((d) => ({ severity: d.severity, path: d.path, message: d.message, ...(d.hint ? { hint: d.hint } : {}) })) },
    null,
    2,
  );
}

/** One diagnostic per line on stderr: `path: message (hint)`. */
export function printDiagnostics(diagnostics: readonly Diagnostic[]): void {
  for (const d of diagnostics) console.error(formatDiagnostic(d));
}

import { readFile } from 'node:fs/promises';
import { formatDiagnostic, parseDocument, type Diagnostic, type ProjectDocument } from '@pipeloom/core';

// Reads and parses a project document for a command. Exit codes of every command:
// 0 ok, 1 other failure (unreadable file, bad option), 2 invalid document.

export const EXIT = { ok: 0, failure: 1, invalid: 2 } as const;

export async function readDocument(command: string, file: string | undefined): Promise<{ ok: true; doc: ProjectDocument } | { ok: false; code: number; diagnostics?: Diagnostic[] }> {
  if (!file) {
    console.error(`pipeloom ${command}: missing the project document (pipeloom ${command} FILE)`);
    return { ok: false, code: EXIT.failure };
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : e instanceof Error ? e.message : String(e);
    console.error(`pipeloom ${command}: cannot read ${file}: ${why}`);
    return { ok: false, code: EXIT.failure };
  }
  const parsed = parseDocument(text);
  if (!parsed.ok) {
    printDiagnostics(parsed.diagnostics);
    return { ok: false, code: EXIT.invalid, diagnostics: parsed.diagnostics };
  }
  return { ok: true, doc: parsed.doc };
}

/** A bad document's diagnostics for `--format json` on stdout: `{ ok: false, diagnostics: [{ severity, path, message, hint }] }`. */
export function diagnosticsJson(diagnostics: readonly Diagnostic[]): string {
  return JSON.stringify({ ok: false, diagnostics: diagnostics.map((d) => ({ severity: d.severity, path: d.path, message: d.message, ...(d.hint ? { hint: d.hint } : {}) })) }, null, 2);
}

/** One diagnostic per line on stderr: `path: message (hint)`. */
export function printDiagnostics(diagnostics: readonly Diagnostic[]): void {
  for (const d of diagnostics) console.error(formatDiagnostic(d));
}

import { error, type Diagnostic } from '../diagnostics.js';
import { formatBytes } from '../util/units.js';
import { migrate } from './migrate.js';
import { checkShape } from './shape.js';
import type { ProjectDocument } from './types.js';

/**
 * The largest document read, in bytes of its UTF-8 text. The CLI checks a file's size against it
 * before reading, the designer before parsing; parseDocument refuses longer text. A document
 * this size takes about 10 times as much memory once parsed.
 */
export const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

/**
 * Parses a document's JSON text. Never throws: malformed JSON gives one diagnostic with its
 * line and column; a wrong shape gives one per field. The document is returned as written
 * (shorthands kept); compile() and validate() normalise it. Text longer than `maxBytes`
 * characters (each is at least one byte) is refused unread.
 */
export function parseDocument(
  text: string,
  opts: { maxBytes?: number } = {},
): { ok: true; doc: ProjectDocument; diagnostics: Diagnostic[] } | { ok: false; diagnostics: Diagnostic[] } {
  const max = opts.maxBytes ?? MAX_DOCUMENT_BYTES;
  if (text.length > max)
    return {
      ok: false,
      diagnostics: [
        error(
          'document',
          `the document has ${text.length} characters, more than the limit of ${max} bytes (${formatBytes(max)})`,
          'split the project, or raise the limit (the CLI reads PIPELOOM_MAX_DOCUMENT_BYTES)',
        ),
      ],
    };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    const at = jsonErrorOffset(text);
    const { line, column } = lineColumn(text, at);
    const reason = e instanceof Error ? e.message.split('\n')[0] : 'malformed JSON';
    return { ok: false, diagnostics: [error(`line ${line}, column ${column}`, `malformed JSON: ${reason}`, 'fix the JSON syntax at that position')] };
  }
  const migrated = migrate(raw);
  if (!migrated.doc) return { ok: false, diagnostics: migrated.diagnostics };
  const shape = checkShape(migrated.doc);
  if (shape.length) return { ok: false, diagnostics: shape };
  return { ok: true, doc: migrated.doc as unknown as ProjectDocument, diagnostics: [] };
}

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      last = i;
    }
  }
  return { line, column: offset - last };
}

/** Offset of the first syntax error (JSON.parse's message does not always carry one). */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  class Stop {
    constructor(readonly at: number) {}
  }
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const expect = (s: string) => {
    if (text.startsWith(s, i)) i += s.length;
    else throw new Stop(i);
  };
  const string = () => {
    expect('"');
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) throw new Stop(i);
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) throw new Stop(i);
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) throw new Stop(i);
      }
      i++;
    }
    expect('"');
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        string();
        ws();
        expect(':');
        value();
        ws();
        if (text[i] === ',') i++;
        else return expect('}');
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else return expect(']');
      }
    }
    if (ch === '"') return string();
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m && m[0] !== '' && m[0] !== '-') return void (i += m[0].length);
    for (const lit of ['true', 'false', 'null']) if (text.startsWith(lit, i)) return void (i += lit.length);
    throw new Stop(i);
  };
  try {
    value();
    ws();
    return i < text.length ? i : 0;
  } catch (e) {
    if (e instanceof Stop) return e.at;
    throw e;
  }
}

import { error, type Diagnostic } from '../diagnostics.js';
import { FORMAT } from './types.js';

// Every document carries its format version; a migration turns version n into n + 1, so a
// document of any earlier version reaches the current one.
type Migration = (doc: Record<string, unknown>) => Record<string, unknown>;

/**
 * Versions in order; `up` migrates a document of that version to the next one.
 * v1 -> v2: v2 added params, defs (composites), rates, delays and strict keys; a v1 document
 * means the same in v2, so only its format changes.
 */
const versions: { format: string; up?: Migration }[] = [{ format: 'pipeloom/v1', up: (doc) => ({ ...doc }) }, { format: FORMAT }];

export const CURRENT_FORMAT = FORMAT;

/** Brings a parsed document to the current format, or says why it cannot. */
export function migrate(raw: unknown): { doc?: Record<string, unknown>; diagnostics: Diagnostic[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { diagnostics: [error('', 'the document is not a JSON object', `write an object with "format": "${FORMAT}"`)] };
  }
  let doc = raw as Record<string, unknown>;
  const format = doc.format;
  const at = versions.findIndex((v) => v.format === format);
  if (at < 0) {
    const known = versions.map((v) => v.format).join(', ');
    return {
      diagnostics: [
        error('format', format === undefined ? 'missing document format' : `unknown format ${JSON.stringify(format)}`, `set "format" to one of: ${known}`),
      ],
    };
  }
  for (let i = at; i < versions.length - 1; i++) {
    doc = versions[i].up!(doc);
    doc.format = versions[i + 1].format;
  }
  return { doc, diagnostics: [] };
}

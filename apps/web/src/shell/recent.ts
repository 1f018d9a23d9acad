import { formatDiagnostic, type WrittenDocument } from '@pipeloom/core';
import { readDocument } from '../document/documents.js';

// Recent projects: each time a project is replaced (New, Open…, an example, another recent
// one) its latest state is kept here, in localStorage, so a reload cannot lose what undo
// would have brought back. Bounded in count and in size: localStorage holds about 5 M
// characters per origin, shared with the autosave.

const KEY = 'pipeloom.recent.v1';
export const RECENT_MAX = 8;
/** A larger project is not copied here (the autosave and Save still keep it). */
export const RECENT_DOC_MAX_CHARS = 1_000_000;
const RECENT_TOTAL_MAX_CHARS = 2_000_000;

export interface RecentEntry {
  name: string;
  /** When it was left, ms since the epoch. */
  savedAt: number;
  nodes: number;
  /** The document as JSON, read back with `readDocument` when reopened. */
  text: string;
}

const isEntry = (e: unknown): e is RecentEntry =>
  !!e &&
  typeof e === 'object' &&
  typeof (e as RecentEntry).name === 'string' &&
  typeof (e as RecentEntry).savedAt === 'number' &&
  typeof (e as RecentEntry).nodes === 'number' &&
  typeof (e as RecentEntry).text === 'string';

export function recentProjects(): RecentEntry[] {
  try {
    const raw = localStorage.getItem(KEY);
    if (!raw || raw.length > RECENT_TOTAL_MAX_CHARS * 2) return [];
    const list: unknown = JSON.parse(raw);
    return Array.isArray(list) ? list.filter(isEntry).slice(0, RECENT_MAX) : [];
  } catch {
    return [];
  }
}

/** Nothing to keep: an empty untitled project, as New makes it. */
const blank = (doc: WrittenDocument) => doc.app.nodes.length === 0 && Object.keys(doc.defs ?? {}).length === 0 && doc.name === 'untitled';

export type Remembered = 'kept' | 'blank' | 'too large' | 'no storage';

/** Puts `doc` first in the list (an identical copy further down is dropped); the oldest go beyond the bounds. */
export function rememberProject(doc: WrittenDocument, now = Date.now()): Remembered {
  if (blank(doc)) return 'blank';
  const text = JSON.stringify(doc);
  if (text.length > RECENT_DOC_MAX_CHARS) return 'too large';
  const list = [{ name: doc.name || 'untitled', savedAt: now, nodes: doc.app.nodes.length, text }, ...recentProjects().filter((e) => e.text !== text)].slice(
    0,
    RECENT_MAX,
  );
  let total = list.reduce((n, e) => n + e.text.length, 0);
  while (list.length > 1 && total > RECENT_TOTAL_MAX_CHARS) total -= list.pop()!.text.length;
  // The autosave shares the quota: on a full storage drop the oldest entries and try again.
  while (list.length) {
    try {
      localStorage.setItem(KEY, JSON.stringify(list));
      return 'kept';
    } catch {
      list.pop();
    }
  }
  return 'no storage';
}

/** The entry's document in canonical form, or why it cannot be opened. */
export function readRecent(e: RecentEntry): { doc?: WrittenDocument; error?: string } {
  const r = readDocument(e.text);
  return r.doc ? { doc: r.doc } : { error: r.diagnostics.map(formatDiagnostic).join('; ') || 'not a project document' };
}

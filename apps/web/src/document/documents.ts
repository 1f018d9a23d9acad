import { FORMAT, kernelVersions, normalize, parseDocument, type Diagnostic, type WrittenDocument } from '@pipeloom/core';
import { hostSize, placePes } from './archDefaults.js';
import { longestPathDepths } from '../lib/layers.js';

// Documents enter the editor in canonical form (every PE and link explicit, shorthands
// expanded), with canvas positions filled in where the file has none.

export function readDocument(text: string): { doc?: WrittenDocument; diagnostics: Diagnostic[] } {
  const r = parseDocument(text);
  if (!r.ok) return { diagnostics: r.diagnostics };
  return { doc: withPositions(normalize(r.doc)), diagnostics: r.diagnostics };
}

export const fromValue = (raw: unknown) => readDocument(JSON.stringify(raw));

/** Lays out anything without a position: DFG nodes by depth, hosts in a column, PEs in a row. */
export function withPositions(doc: WrittenDocument): WrittenDocument {
  const depth = nodeDepths(doc);
  const rows = new Map<number, number>();
  const nodes = doc.app.nodes.map((n) => {
    if (n.position) return n;
    const d = depth.get(n.id) ?? 0;
    const r = rows.get(d) ?? 0;
    rows.set(d, r + 1);
    return { ...n, position: { x: 40 + d * 290, y: 60 + r * 120 } };
  });
  const unplaced = doc.arch.pes.filter((p) => !p.position);
  const placed = new Map(
    placePes(
      doc.arch.pes.filter((p) => p.position),
      unplaced,
    ).map((p, i) => [unplaced[i], p]),
  );
  const pes = doc.arch.pes.map((p) => placed.get(p) ?? p);
  const withPes = { ...doc, arch: { ...doc.arch, pes } };
  let x = 0;
  const hosts = doc.arch.hosts.map((h) => {
    const out = h.position ? h : { ...h, position: { x, y: 0 } };
    x = Math.max(x, out.position!.x) + hostSize(withPes, h.id).width + 120;
    return out;
  });
  return { ...withPes, app: { ...doc.app, nodes }, arch: { ...withPes.arch, hosts } };
}

/** Saves the document with the kernel versions it was made with (`kernels`, checked when it is read again). */
export function download(doc: WrittenDocument) {
  const kernels = kernelVersions(doc);
  const saved = Object.keys(kernels).length ? { ...doc, kernels } : doc;
  const blob = new Blob([JSON.stringify(saved, null, 2) + '\n'], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${(doc.name || 'project').replace(/[^A-Za-z0-9_.-]+/g, '-')}.json`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

const AUTOSAVE_KEY = 'pipeloom.autosave.v1';

/** The autosaved project's text, if there is one (read it with readDocument, or in the worker). */
export function autosavedText(): string | undefined {
  try {
    return localStorage.getItem(AUTOSAVE_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** What became of an autosave: kept, or not (`chars`: the project's size as JSON). */
export type Autosaved = { kept: true } | { kept: false; chars: number; why: 'too large' | 'no storage' };

/**
 * Writes the project to localStorage (about 5 M characters per site, shared with Recent). A
 * project that does not fit is not kept, and the copy of an earlier state is removed, so a
 * reload cannot bring back an older project as if it were this one (Recent keeps the one left).
 */
export function autosave(doc: WrittenDocument): Autosaved {
  const drop = () => {
    try {
      localStorage.removeItem(AUTOSAVE_KEY);
    } catch {
      // Storage disabled: nothing was kept either.
    }
  };
  // A project whose text alone is over the quota cannot fit: it is not serialised (for tens of
  // MB that takes seconds of the main thread, on every edit).
  const least = textLength(doc);
  if (least > STORAGE_CHARS) {
    drop();
    return { kept: false, chars: least, why: 'too large' };
  }
  const text = JSON.stringify(doc);
  try {
    localStorage.setItem(AUTOSAVE_KEY, text);
    return { kept: true };
  } catch (e) {
    drop();
    return { kept: false, chars: text.length, why: e instanceof DOMException && /quota/i.test(e.name) ? 'too large' : 'no storage' };
  }
}

/** The characters of local storage a site gets (Chromium's and Firefox's 5 Mi UTF-16 units, keys included). */
export const STORAGE_CHARS = 5 * 1024 * 1024;

/** The characters of a value's keys and strings: less than its JSON, and read without making it. */
function textLength(value: unknown): number {
  let n = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') n += v.length;
    else if (Array.isArray(v)) for (const x of v) stack.push(x);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        n += k.length;
        stack.push(x);
      }
    }
  }
  return n;
}

/** Each DFG node's depth (lib/layers.ts): a search of every edge per node took seconds on a 10,000-node file. */
export function nodeDepths(doc: WrittenDocument): Map<string, number> {
  return longestPathDepths(
    doc.app.nodes.map((n) => n.id),
    doc.app.edges.map((e) => ({ from: e.from.node, to: e.to.node })),
  );
}

export function emptyDocument(): WrittenDocument {
  return {
    format: FORMAT,
    name: 'untitled',
    app: { nodes: [], edges: [] },
    arch: {
      hosts: [{ id: 'h0', position: { x: 0, y: 0 } }],
      pes: [{ id: 'cpu@h0', host: 'h0', kind: 'cpu', memory: 8 * 2 ** 30, position: { x: 20, y: 40 } }],
      links: [],
    },
    mapping: {},
    options: { overlap: true, iterations: 50 },
  };
}

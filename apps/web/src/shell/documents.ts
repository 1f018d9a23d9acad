import { normalize, parseDocument, type Diagnostic, type ProcessingElement, type ProjectDocument } from '@pipeloom/core';
import { hostSize, nextSlot } from '../arch/defaults.js';

// Documents enter the editor in canonical form (every PE and link explicit, shorthands
// expanded), with canvas positions filled in where the file has none.

export function readDocument(text: string): { doc?: ProjectDocument; diagnostics: Diagnostic[] } {
  const r = parseDocument(text);
  if (!r.ok) return { diagnostics: r.diagnostics };
  return { doc: withPositions(normalize(r.doc)), diagnostics: r.diagnostics };
}

export const fromValue = (raw: unknown) => readDocument(JSON.stringify(raw));

/** Lays out anything without a position: DFG nodes by depth, hosts in a column, PEs in a row. */
export function withPositions(doc: ProjectDocument): ProjectDocument {
  const depth = nodeDepths(doc);
  const rows = new Map<number, number>();
  const nodes = doc.app.nodes.map((n) => {
    if (n.position) return n;
    const d = depth.get(n.id) ?? 0;
    const r = rows.get(d) ?? 0;
    rows.set(d, r + 1);
    return { ...n, position: { x: 40 + d * 290, y: 60 + r * 120 } };
  });
  const placed: ProcessingElement[] = doc.arch.pes.filter((p) => p.position);
  const pes = doc.arch.pes.map((p) => {
    if (p.position) return p;
    const out = { ...p, position: nextSlot(placed, p.host, p.kind) };
    placed.push(out);
    return out;
  });
  const withPes = { ...doc, arch: { ...doc.arch, pes } };
  let x = 0;
  const hosts = doc.arch.hosts.map((h) => {
    const out = h.position ? h : { ...h, position: { x, y: 0 } };
    x = Math.max(x, out.position!.x) + hostSize(withPes, h.id).width + 120;
    return out;
  });
  return { ...withPes, app: { ...doc.app, nodes }, arch: { ...withPes.arch, hosts } };
}

export function download(doc: ProjectDocument) {
  const blob = new Blob([JSON.stringify(doc, null, 2) + '\n'], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${(doc.name || 'project').replace(/[^A-Za-z0-9_.-]+/g, '-')}.json`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

const AUTOSAVE_KEY = 'pipeloom.autosave.v1';

export function restoreAutosave(): ProjectDocument | undefined {
  try {
    const text = localStorage.getItem(AUTOSAVE_KEY);
    return text ? readDocument(text).doc : undefined;
  } catch {
    return undefined;
  }
}

export function autosave(doc: ProjectDocument) {
  try {
    localStorage.setItem(AUTOSAVE_KEY, JSON.stringify(doc));
  } catch {
    // Storage full or disabled: the session still works, it just will not survive a reload.
  }
}

/**
 * Each DFG node's depth: the longest path to it from a node without inputs, in Kahn's order
 * (no recursion, linear in nodes and edges: a search of every edge per node took seconds on a
 * 10,000-node file). A document being edited may have a cycle: its first node in document
 * order goes one column past its deepest input placed so far, and the rest follow it.
 */
export function nodeDepths(doc: ProjectDocument): Map<string, number> {
  const ids = new Set(doc.app.nodes.map((n) => n.id));
  const out = new Map<string, string[]>();
  const indegree = new Map<string, number>();
  for (const e of doc.app.edges) {
    if (!ids.has(e.from.node) || !ids.has(e.to.node)) continue;
    const list = out.get(e.from.node);
    if (list) list.push(e.to.node);
    else out.set(e.from.node, [e.to.node]);
    indegree.set(e.to.node, (indegree.get(e.to.node) ?? 0) + 1);
  }
  const depth = new Map<string, number>();
  const queue = doc.app.nodes.map((n) => n.id).filter((id) => !indegree.get(id));
  const queued = new Set(queue);
  for (const id of queue) depth.set(id, 0);
  const relax = (from: string) => {
    for (const to of out.get(from) ?? []) {
      // An edge back to a node already placed (a cycle) does not move it.
      if (queued.has(to)) continue;
      depth.set(to, Math.max(depth.get(to) ?? 0, depth.get(from)! + 1));
      const left = indegree.get(to)! - 1;
      indegree.set(to, left);
      if (left === 0 && !queued.has(to)) {
        queued.add(to);
        queue.push(to);
      }
    }
  };
  for (let i = 0; i < queue.length; i++) relax(queue[i]);
  // Nodes on or after a cycle never lose all their inputs: place them in document order.
  for (const n of doc.app.nodes) {
    if (!queued.has(n.id)) {
      depth.set(n.id, depth.get(n.id) ?? 0);
      indegree.set(n.id, 0);
      queued.add(n.id);
      queue.push(n.id);
      for (let i = queue.length - 1; i < queue.length; i++) relax(queue[i]);
    }
  }
  return depth;
}


import { useMemo } from 'react';
import { evaluateExpression, flattenDocument, paramTable, type AppNode, type WrittenDocument } from '@pipeloom/core';
import { findKernel } from '@pipeloom/kernels';
import { useProject } from './project.js';
import { walkInstances } from '../document/graphs.js';
import { forCore } from '../document/targets.js';

// Nodes with numbers where their params are expressions (`"width": "W"`), so the canvas and
// the inspector resolve port types as the compiler will. Core's flatten evaluates every node
// in the scope it is written in (a composite's params first) and names it by its flattened id
// (`s1/inc`); while the document has a problem flatten refuses, and each node's numeric params
// are evaluated against the document's params alone, those that fail left as written.
// A document without params or composites (every large one so far) is used as it is.

export type Resolve = (flatId: string, written: AppNode) => AppNode;

export function usesExpressions(doc: WrittenDocument): boolean {
  if (doc.params && Object.keys(doc.params).length) return true;
  if (doc.defs && Object.keys(doc.defs).length) return true;
  return doc.app.nodes.some((n) => n.composite !== undefined || n.graph !== undefined);
}

export function resolver(doc: WrittenDocument): Resolve {
  if (!usesExpressions(doc)) return (_, n) => n;
  const flat = flattenDocument(forCore(doc));
  const byId = new Map((flat.doc?.app.nodes ?? []).map((n) => [n.id, n]));
  const values: Record<string, number> = {};
  for (const r of paramTable(forCore(doc))) if (r.value !== undefined) values[r.name] = r.value;
  return (flatId, written) => byId.get(flatId) ?? evaluated(written, values);
}

/** The node with its numeric kernel params evaluated against `values` where they can be. */
function evaluated(n: AppNode, values: Record<string, number>): AppNode {
  // A scan's numeric params are its operator's.
  const id = n.kernel ?? (n.type === 'scan' && typeof n.params?.operator === 'string' ? n.params.operator : undefined);
  const kernel = id !== undefined ? findKernel(id) : undefined;
  if (!kernel || !n.params) return n;
  let params: AppNode['params'] | undefined;
  for (const [k, v] of Object.entries(n.params)) {
    const t = kernel.params[k]?.type;
    if (typeof v !== 'string' || (t !== 'int' && t !== 'float')) continue;
    const r = evaluateExpression(v, values);
    if (r.ok) (params ??= { ...n.params })[k] = r.value;
  }
  return params ? { ...n, params } : n;
}

/** The resolver of the current document (one flatten per edit, shared by the views). */
export function useResolve(): Resolve {
  const doc = useProject((s) => s.doc);
  return useMemo(() => resolver(doc), [doc]);
}

/** Every flattened node id of the document (`P`, `s1`, `s1/inc`), composites with `composite: true`: what a mapping may name. */
export function flatNodes(doc: WrittenDocument): { id: string; composite: boolean }[] {
  const out: { id: string; composite: boolean }[] = [];
  walkInstances(doc, (n, flatId) => out.push({ id: flatId, composite: n.composite !== undefined || n.graph !== undefined }));
  return out;
}

import type { WrittenDocument } from '@pipeloom/core';
import { isApp, type GraphAt } from '../document/graphs.js';
import { groupChanges, ungroupChanges } from '../document/hierarchy.js';
import { projectStore } from './project.js';

// Group and ungroup as the canvas toolbar and the inspector run them: one undo step each, the
// reason shown as a toast when the graph refuses.

/** Groups nodes `ids` of the graph at `at` into a new composite and selects it (`done` first); false when refused. */
export function group(at: GraphAt | undefined, ids: string[], done: () => void): boolean {
  const st = projectStore.getState();
  const r = groupChanges(st.doc, at, ids);
  if ('error' in r) {
    st.toast(r.error, 'error');
    return false;
  }
  if (!st.dispatch(r.changes, { label: `group ${ids.join(', ')}` })) return false;
  done();
  st.select({ kind: 'node', id: r.id, ...(at && !isApp(at) ? { at } : {}) });
  return true;
}

/** Puts composite `id`'s inner nodes in its place in the graph at `at`. */
export function ungroup(doc: WrittenDocument, at: GraphAt | undefined, id: string) {
  const st = projectStore.getState();
  const r = ungroupChanges(doc, at, id);
  if ('error' in r) st.toast(r.error, 'error');
  else if (st.dispatch(r.changes, { label: `ungroup ${id}` })) st.select(null);
}

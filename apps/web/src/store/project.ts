import { createStore, useStore } from 'zustand';
import type { WrittenDocument } from '@pipeloom/core';
import { emptyDocument } from '../document/documents.js';
import { applyChanges, ChangeError, type Change } from '../document/changes.js';
import { History } from './history.js';
import type { Selection, ViewId } from '../document/records.js';
import { viewForSelection } from '../document/selection.js';
import { instancePrefixes, isApp, validLevel } from '../document/graphs.js';

// The designer's one store: the document, the one history across all graphs, the selection
// and the current view. Components read slices; every edit goes through `dispatch`.

export interface Toast {
  id: number;
  message: string;
  kind: 'info' | 'error';
}

export interface ProjectState {
  doc: WrittenDocument;
  /** Bumped by every change the compiler can see (not by moves). */
  revision: number;
  /** Bumped when a whole document is loaded: canvases refit. */
  loads: number;
  selection: Selection | null;
  view: ViewId;
  /** The composite instances entered on the DFG canvas, from the top (`['s1', 'inner']`); empty: the app graph. */
  level: string[];
  /** The DFG canvas shows the lowered single-rate graph (firings), read-only. */
  expandedGraph: boolean;
  canUndo: boolean;
  canRedo: boolean;
  undoLabel?: string;
  redoLabel?: string;
  toasts: Toast[];
  dispatch(changes: Change | Change[], opts?: { label?: string; coalesce?: string }): boolean;
  /** Ends a coalescing burst (drag stop, field blur). */
  seal(): void;
  undo(): void;
  redo(): void;
  /** The session's first document (the autosave restored on start): no undo step, history cleared. */
  load(doc: WrittenDocument): void;
  /** Replaces the document as one undo step (an example, Open…, New, a recent project): undo brings the replaced one back. */
  open(doc: WrittenDocument, label: string): void;
  select(s: Selection | null, opts?: { reveal?: boolean }): void;
  setView(v: ViewId): void;
  /** Shows the graph of the composite instances `level` on the DFG canvas (the breadcrumb). */
  setLevel(level: string[]): void;
  showExpanded(on: boolean): void;
  toast(message: string, kind?: Toast['kind']): void;
  dismiss(id: number): void;
}

// Moves, and drawing a composite collapsed or expanded: the compiler sees none of them.
const layoutOnly = (cs: Change[]) =>
  cs.every(
    (c) =>
      c.type === 'node/move' ||
      c.type === 'host/move' ||
      c.type === 'pe/move' ||
      (c.type === 'node/update' && c.collapsed !== undefined && c.params === undefined && c.rates === undefined && c.kernel === undefined),
  );

function describe(cs: Change[]): string {
  const c = cs[cs.length - 1];
  return c ? c.type.replace('/', ' ') : 'edit';
}

let toastSeq = 0;

export function createProjectStore(initial: WrittenDocument = emptyDocument()) {
  const history = new History();
  return createStore<ProjectState>()((set, get) => {
    const sync = () => ({ canUndo: history.canUndo, canRedo: history.canRedo, undoLabel: history.undoLabel, redoLabel: history.redoLabel });
    const applyEntry = (cs: Change[]) => applyChanges(get().doc, cs);
    // A whole document in place of another: canvases refit, selection and level start over.
    const replaceWith = (doc: WrittenDocument) =>
      set({ doc, revision: get().revision + 1, loads: get().loads + 1, selection: null, level: [], expandedGraph: false, ...sync() });
    return {
      doc: initial,
      revision: 0,
      loads: 0,
      selection: null,
      view: 'dfg',
      level: [],
      expandedGraph: false,
      canUndo: false,
      canRedo: false,
      toasts: [],
      dispatch(changes, opts = {}) {
        const list = Array.isArray(changes) ? changes : [changes];
        if (!list.length) return true;
        try {
          const r = applyEntry(list);
          history.record({ label: opts.label ?? describe(list), forward: r.forward, inverse: r.inverse, coalesce: opts.coalesce });
          set({ doc: r.doc, revision: layoutOnly(r.forward) ? get().revision : get().revision + 1, level: validLevel(r.doc, get().level), ...sync() });
          return true;
        } catch (e) {
          if (!(e instanceof ChangeError)) throw e;
          get().toast(e.message, 'error');
          return false;
        }
      },
      seal() {
        history.seal();
      },
      undo() {
        history.seal();
        const e = history.takeUndo();
        if (!e) return;
        if (e.replace) {
          history.pushRedo(e);
          return replaceWith(e.replace.before);
        }
        const r = applyEntry(e.inverse);
        history.pushRedo(e);
        set({ doc: r.doc, revision: get().revision + 1, level: validLevel(r.doc, get().level), ...sync() });
      },
      redo() {
        const e = history.takeRedo();
        if (!e) return;
        if (e.replace) {
          history.pushUndo(e);
          return replaceWith(e.replace.after);
        }
        const r = applyEntry(e.forward);
        history.pushUndo(e);
        set({ doc: r.doc, revision: get().revision + 1, level: validLevel(r.doc, get().level), ...sync() });
      },
      load(doc) {
        history.clear();
        replaceWith(doc);
      },
      open(doc, label) {
        history.seal();
        history.record({ label, forward: [], inverse: [], replace: { before: get().doc, after: doc } });
        replaceWith(doc);
      },
      select(s, opts = {}) {
        if (!s || !opts.reveal) return set({ selection: s });
        // A node or edge inside a composite is shown inside its first instance.
        let level = get().level;
        if (s.kind === 'node' || s.kind === 'edge') {
          const first = isApp(s.at) ? '' : instancePrefixes(get().doc, s.at)[0];
          if (first !== undefined) level = first ? first.slice(0, -1).split('/') : [];
        }
        set({ selection: s, view: viewForSelection(s), level });
      },
      setView(v) {
        set({ view: v });
      },
      setLevel(level) {
        set({ level: validLevel(get().doc, level), selection: null });
      },
      showExpanded(on) {
        set({ expandedGraph: on });
      },
      toast(message, kind = 'info') {
        const id = ++toastSeq;
        set({ toasts: [...get().toasts.slice(-3), { id, message, kind }] });
        setTimeout(() => get().dismiss(id), kind === 'error' ? 6000 : 2500);
      },
      dismiss(id) {
        set({ toasts: get().toasts.filter((t) => t.id !== id) });
      },
    };
  });
}

export type ProjectStore = ReturnType<typeof createProjectStore>;

/** The app's store instance. */
export const projectStore = createProjectStore();

export function useProject<T>(selector: (s: ProjectState) => T): T {
  return useStore(projectStore, selector);
}

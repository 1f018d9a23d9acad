import type { WrittenDocument } from '@pipeloom/core';
import type { Change } from '../document/changes.js';

// One history for the whole project: an entry holds the changes of one user action across
// any of the three graphs, and the changes that undo it. Entries sharing a coalesce key
// (one drag, one typing burst in a field) merge, so a drag is one undo step. Loading a
// whole document (an example, Open…, New, a recent project) is one entry too: it keeps the
// documents on both sides, so undo brings back the project that was replaced.

export interface HistoryEntry {
  label: string;
  forward: Change[];
  inverse: Change[];
  coalesce?: string;
  /** A whole-document load: undo restores `before`, redo `after` (forward and inverse are empty). */
  replace?: { before: WrittenDocument; after: WrittenDocument };
}

export class History {
  private undos: HistoryEntry[] = [];
  private redos: HistoryEntry[] = [];

  constructor(private readonly limit = 500) {}

  get canUndo() {
    return this.undos.length > 0;
  }
  get canRedo() {
    return this.redos.length > 0;
  }
  get undoLabel() {
    return this.undos.at(-1)?.label;
  }
  get redoLabel() {
    return this.redos.at(-1)?.label;
  }
  get size() {
    return this.undos.length;
  }

  record(entry: HistoryEntry): void {
    if (!entry.forward.length && !entry.replace) return;
    this.redos = [];
    const top = this.undos.at(-1);
    if (entry.coalesce && top?.coalesce === entry.coalesce && !top.replace) {
      // The earliest inverse restores the state before the first change of the burst.
      top.forward = [...top.forward, ...entry.forward];
      top.inverse = [...entry.inverse, ...top.inverse];
      return;
    }
    this.undos.push(entry);
    if (this.undos.length > this.limit) this.undos.shift();
  }

  /** Stops the top entry from absorbing later changes with the same key. */
  seal(): void {
    const top = this.undos.at(-1);
    if (top) top.coalesce = undefined;
  }

  /** Pops the entry to undo; the caller applies its inverse and hands back what it applied. */
  takeUndo(): HistoryEntry | undefined {
    return this.undos.pop();
  }
  pushRedo(e: HistoryEntry) {
    this.redos.push(e);
  }
  takeRedo(): HistoryEntry | undefined {
    return this.redos.pop();
  }
  pushUndo(e: HistoryEntry) {
    this.undos.push(e);
  }

  clear(): void {
    this.undos = [];
    this.redos = [];
  }
}

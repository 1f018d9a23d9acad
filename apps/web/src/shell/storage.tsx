import { createStore, useStore } from 'zustand';
import { formatBytes } from '@pipeloom/core';
import { projectStore, useProject } from '../store/project.js';
import { autosave, download, type Autosaved } from '../document/documents.js';

// Whether the browser keeps the project across a reload. The autosave fails quietly on its
// own; this says so on the page while the project does not fit, with Save at hand.

export const storageStore = createStore<{ notKept: (Autosaved & { kept: false }) | null; dismissed: boolean }>()(() => ({ notKept: null, dismissed: false }));

/** Autosaves the project and keeps the notice up to date (once dismissed, hidden until the project is kept again). */
export function keepProject(): void {
  const r = autosave(projectStore.getState().doc);
  const was = storageStore.getState().notKept;
  if (r.kept) storageStore.setState({ notKept: null, dismissed: false });
  else storageStore.setState({ notKept: r, dismissed: was ? storageStore.getState().dismissed : false });
}

export function StorageNotice() {
  const { notKept, dismissed } = useStore(storageStore);
  const name = useProject((s) => s.doc.name) || 'untitled';
  if (!notKept || dismissed) return null;
  return (
    <div className="storage-notice" role="alert" data-testid="storage-notice">
      <span>
        {notKept.why === 'too large'
          ? `"${name}" (about ${formatBytes(notKept.chars)} as JSON) is too big to keep in this browser's storage (about 5 MB): a reload would not bring it back.`
          : `This browser does not let the designer keep "${name}": a reload would not bring it back.`}{' '}
        Save it as a file to keep it.
      </span>
      <button onClick={() => download(projectStore.getState().doc)} data-testid="storage-save">
        Save
      </button>
      <button
        className="icon"
        title="Hide this notice (until the project is kept again and fails again)"
        onClick={() => storageStore.setState({ dismissed: true })}
        data-testid="storage-dismiss"
      >
        ×
      </button>
    </div>
  );
}

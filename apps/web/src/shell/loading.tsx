import { createStore, useStore } from 'zustand';
import { formatBytes, formatDiagnostic, MAX_DOCUMENT_BYTES, type WrittenDocument } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { compileStore, compilerApi } from '../store/compiler.js';
import { readDocument } from '../document/documents.js';

// A document entering the editor (Open…, Recent, the autosave at start) is read in the compile
// worker, so that a large one (tens of MB take seconds to parse and normalise) leaves the page
// responsive; the page shows how far it is (reading, parsing, compiling) until its first
// compile is in. One document at a time: a newer one takes over the progress shown.

export type LoadPhase = 'reading' | 'parsing' | 'compiling';

export interface Loading {
  name: string;
  /** Its size: a file's bytes, or a stored text's characters. */
  bytes: number;
  phase: LoadPhase;
}

export const loadingStore = createStore<{ loading: Loading | null }>()(() => ({ loading: null }));
export const useLoading = () => useStore(loadingStore, (s) => s.loading);

let seq = 0;
let unfollow: (() => void) | undefined;

/**
 * Reads the document `name` (`bytes` long, its text from `text`), hands it to `place`, and shows
 * the progress until its first compile. A document over core's MAX_DOCUMENT_BYTES is refused
 * before it is read; a malformed one is a toast naming it. Whether the document was placed.
 */
export async function openDocument(name: string, bytes: number, text: () => Promise<string> | string, place: (doc: WrittenDocument) => void): Promise<boolean> {
  const st = projectStore.getState();
  if (bytes > MAX_DOCUMENT_BYTES) {
    st.toast(
      `Cannot open ${name}: it is ${bytes} bytes (${formatBytes(bytes)}), more than the designer's limit of ${MAX_DOCUMENT_BYTES} bytes (${formatBytes(MAX_DOCUMENT_BYTES)}); split the project into smaller documents`,
      'error',
    );
    return false;
  }
  const mine = ++seq;
  unfollow?.();
  const set = (phase: LoadPhase) => loadingStore.setState({ loading: { name, bytes, phase } });
  const done = () => {
    if (mine === seq) loadingStore.setState({ loading: null });
  };
  try {
    set('reading');
    const source = await text();
    if (mine !== seq) return false;
    set('parsing');
    const api = compilerApi();
    const r = api ? await api.read(source) : readDocument(source);
    if (mine !== seq) return false;
    if (!r.doc) {
      done();
      st.toast(`Cannot open ${name}: ${r.diagnostics.map(formatDiagnostic).join('; ')}`, 'error');
      return false;
    }
    place(r.doc);
    set('compiling');
    follow(mine, projectStore.getState().revision);
    return true;
  } catch (e) {
    done();
    st.toast(`Cannot open ${name}: ${e instanceof Error ? e.message : String(e)}`, 'error');
    return false;
  }
}

/** Clears the progress once the compile of `revision` (or a later one) is in, or failed. */
function follow(mine: number, revision: number) {
  const check = (c: ReturnType<typeof compileStore.getState>) => {
    if (mine !== seq) return true;
    if ((c.status !== 'compiling' && c.result && c.revision >= revision) || c.status === 'failed') {
      loadingStore.setState({ loading: null });
      return true;
    }
    return false;
  };
  if (check(compileStore.getState())) return;
  const off = compileStore.subscribe((c) => {
    if (check(c)) off();
  });
  unfollow = off;
}

const STEPS: { phase: LoadPhase; label: string }[] = [
  { phase: 'reading', label: 'reading' },
  { phase: 'parsing', label: 'parsing and checking' },
  { phase: 'compiling', label: 'validating and compiling' },
];

/** The progress of the document being opened: its name, size and the steps done, doing and to come. */
export function LoadProgress() {
  const loading = useLoading();
  if (!loading) return null;
  const at = STEPS.findIndex((s) => s.phase === loading.phase);
  return (
    <div className="load-progress" role="status" data-testid="load-progress" data-phase={loading.phase}>
      <span className="spinner" aria-hidden />
      <b>Opening {loading.name}</b>
      <span className="muted">({formatBytes(loading.bytes)})</span>
      {STEPS.map((s, i) => (
        <span key={s.phase} className={`load-step ${i < at ? 'done' : i === at ? 'now' : 'next'}`} data-testid={`load-step-${s.phase}`}>
          {i < at ? '✓ ' : ''}
          {s.label}
          {i === at ? '…' : ''}
        </span>
      ))}
    </div>
  );
}

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@xyflow/react/dist/style.css';
import './styles.css';
import { App } from './App.js';
import { projectStore } from './store/project.js';
import { startCompiler } from './store/compiler.js';
import { autosavedText, fromValue, readDocument } from './document/documents.js';
import { openDocument } from './shell/loading.js';
import { keepProject } from './shell/storage.js';
import { examples } from './shell/examples.js';
import { appRun } from './store/run/store.js';
import { followRuns } from './scan/history.js';
import { hideToken } from './store/query.js';

// The agents' token leaves the address bar before anything is drawn (it stays in this tab).
hideToken();

/** An autosave longer than this is read in the worker; a shorter one before the first paint, as always. */
const READ_IN_WORKER_CHARS = 200_000;

// Start where the user left off; a first visit opens the P-I-I-C example. A large autosave is
// read in the compile worker (below), the page up meanwhile.
const saved = autosavedText();
const inWorker = saved !== undefined && saved.length > READ_IN_WORKER_CHARS;
const restored = saved !== undefined && !inWorker ? readDocument(saved).doc : undefined;
const starter = examples.find((e) => e.file === 'piic.json') ?? examples[0];
const first = restored ?? (inWorker ? undefined : starter ? fromValue(starter.doc).doc : undefined);
if (first) projectStore.getState().load(first);
// Until a large autosave is read, the project shown is not the user's: it is not saved over it.
let restoring = inWorker;

let timer: ReturnType<typeof setTimeout> | undefined;
projectStore.subscribe((s, prev) => {
  if (s.doc === prev.doc || restoring) return;
  clearTimeout(timer);
  timer = setTimeout(keepProject, 300);
});
addEventListener('beforeunload', () => {
  if (!restoring) keepProject();
});

// The Run view's results belong to the revision they ran, whether or not its tab is open: an
// edit marks them modified since deploy, opening another project clears them.
const observe = () => appRun.observe({ revision: projectStore.getState().revision, loads: projectStore.getState().loads });
observe();
projectStore.subscribe(observe);
// Each run's measured scan speedups, kept for the speedup chart across runs and edits.
followRuns(appRun, () => projectStore.getState().doc);

startCompiler();
if (inWorker && saved !== undefined) {
  void openDocument(
    'the project saved in this browser',
    saved.length,
    () => saved,
    (doc) => projectStore.getState().load(doc),
  ).then((ok) => {
    restoring = false;
    if (!ok && starter) {
      const doc = fromValue(starter.doc).doc;
      if (doc) projectStore.getState().load(doc);
    }
  });
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import '@xyflow/react/dist/style.css';
import './styles.css';
import { App } from './App.js';
import { projectStore } from './store/project.js';
import { startCompiler } from './worker/client.js';
import { autosave, fromValue, restoreAutosave } from './shell/documents.js';
import { examples } from './shell/examples.js';
import { appRun } from './run/store.js';
import { followRuns } from './scan/history.js';
import { hideToken } from './shell/query.js';

// The agents' token leaves the address bar before anything is drawn (it stays in this tab).
hideToken();

// Start where the user left off; a first visit opens the P-I-I-C example.
const restored = restoreAutosave();
const starter = examples.find((e) => e.file === 'piic.json') ?? examples[0];
const first = restored ?? (starter ? fromValue(starter.doc).doc : undefined);
if (first) projectStore.getState().load(first);

let timer: ReturnType<typeof setTimeout> | undefined;
projectStore.subscribe((s, prev) => {
  if (s.doc === prev.doc) return;
  clearTimeout(timer);
  timer = setTimeout(() => autosave(projectStore.getState().doc), 300);
});
addEventListener('beforeunload', () => autosave(projectStore.getState().doc));

// The Run view's results belong to the revision they ran, whether or not its tab is open: an
// edit marks them modified since deploy, opening another project clears them.
const observe = () => appRun.observe({ revision: projectStore.getState().revision, loads: projectStore.getState().loads });
observe();
projectStore.subscribe(observe);
// Each run's measured scan speedups, kept for the speedup chart across runs and edits.
followRuns(appRun, () => projectStore.getState().doc);

startCompiler();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

import { useEffect, useState } from 'react';
import { ReactFlowProvider } from '@xyflow/react';
import { projectStore, useProject } from './store/project.js';
import { Toolbar, TABS } from './shell/Toolbar.js';
import { download } from './document/documents.js';
import { Inspector } from './shell/Inspector.js';
import { Problems } from './shell/Problems.js';
import { Toasts } from './shell/Toasts.js';
import { LoadProgress } from './shell/loading.js';
import { StorageNotice } from './shell/storage.js';
import { RunTab } from './shell/RunTab.js';
import { DfgEditor } from './dfg/DfgEditor.js';
import { Palette } from './dfg/Palette.js';
import { ArchEditor } from './arch/ArchEditor.js';
import { ArchPanel } from './arch/ArchPanel.js';
import { MappingPanel } from './mapping/MappingPanel.js';
import { IgView } from './ig/IgView.js';
import { MemoryPanel } from './ig/MemoryPanel.js';
import { ParamPanel } from './params/ParamPanel.js';

const editable = (t: EventTarget | null) =>
  t instanceof HTMLElement && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);

function useShortcuts() {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const st = projectStore.getState();
      const mod = e.ctrlKey || e.metaKey;
      if (mod && e.key.toLowerCase() === 's') {
        e.preventDefault();
        download(st.doc);
        return;
      }
      // Inside a field the browser's own text undo is what the user means.
      if (editable(e.target)) return;
      if (mod && e.key.toLowerCase() === 'z') {
        e.preventDefault();
        if (e.shiftKey) st.redo();
        else st.undo();
      } else if (mod && e.key.toLowerCase() === 'y') {
        e.preventDefault();
        st.redo();
      } else if (e.altKey && /^[1-5]$/.test(e.key)) {
        e.preventDefault();
        st.setView(TABS[Number(e.key) - 1].id);
      } else if (e.key === 'Escape') st.select(null);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

export function App() {
  const view = useProject((s) => s.view);
  const loads = useProject((s) => s.loads);
  useShortcuts();
  const left =
    view === 'dfg' ? (
      <>
        <ParamPanel />
        <Palette />
      </>
    ) : view === 'arch' ? (
      <ArchPanel />
    ) : view === 'mapping' ? (
      <MappingPanel />
    ) : view === 'ig' ? (
      <MemoryPanel />
    ) : null;
  const run = view === 'run';
  // The IG view is read-only and wide: it gets the inspector's column.
  const wide = view === 'ig';
  // The Run view lists its own problems and wants the height for its timeline.
  const [collapsedIn, setCollapsedIn] = useState<Partial<Record<string, boolean>>>({ run: true });
  const collapsed = collapsedIn[view] ?? false;
  const toggleProblems = () => setCollapsedIn((c) => ({ ...c, [view]: !collapsed }));
  return (
    <div className={`app${run ? ' run' : ''}${wide ? ' wide' : ''}${collapsed ? ' problems-collapsed' : ''}`} data-testid="app" data-view={view}>
      <Toolbar />
      {left && <aside className="left">{left}</aside>}
      <main className="center">
        <ReactFlowProvider key={`${view}-${loads}`}>
          {view === 'dfg' && <DfgEditor />}
          {view === 'arch' && <ArchEditor />}
          {view === 'mapping' && <DfgEditor mode="mapping" />}
          {view === 'ig' && <IgView />}
        </ReactFlowProvider>
        {run && <RunTab />}
      </main>
      {!run && !wide && (
        <aside className="right">
          <Inspector />
        </aside>
      )}
      <footer className="bottom">
        <Problems collapsed={collapsed} onToggle={toggleProblems} />
      </footer>
      <Toasts />
      <div className="notices">
        <LoadProgress />
        <StorageNotice />
      </div>
    </div>
  );
}

import { useRef, useState } from 'react';
import { projectStore, useProject } from '../store/project.js';
import type { ViewId } from '../document/records.js';
import { download, emptyDocument as newProject, fromValue } from '../document/documents.js';
import { openDocument } from './loading.js';
import { examples } from './examples.js';
import { recentProjects, rememberProject, type RecentEntry } from './recent.js';
import { formatDiagnostic, type WrittenDocument } from '@pipeloom/core';

const TABS: { id: ViewId; label: string; key: string }[] = [
  { id: 'dfg', label: 'Application', key: '1' },
  { id: 'arch', label: 'Architecture', key: '2' },
  { id: 'mapping', label: 'Mapping', key: '3' },
  { id: 'ig', label: 'Implementation', key: '4' },
  { id: 'run', label: 'Run', key: '5' },
];
export { TABS };

/**
 * Puts `doc` in place of the project as one undo step; the project it replaces is also kept
 * under Recent, so neither undo nor a reload loses it.
 */
function replaceProject(doc: WrittenDocument, what: string) {
  const st = projectStore.getState();
  const before = st.doc;
  const kept = rememberProject(before);
  st.open(doc, `open ${what}`);
  if (kept === 'too large') st.toast(`Loaded ${what}. "${before.name}" is too large for Recent: Undo brings it back, Save keeps it`);
  else if (kept === 'blank') st.toast(`Loaded ${what}`);
  else st.toast(`Loaded ${what}. Undo (Ctrl+Z) brings back "${before.name}"`);
}

const ago = (ms: number) => {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 60 ? 'just now' : s < 3600 ? `${Math.round(s / 60)} min ago` : s < 86400 ? `${Math.round(s / 3600)} h ago` : new Date(ms).toLocaleDateString();
};

export function Toolbar() {
  const view = useProject((s) => s.view);
  const name = useProject((s) => s.doc.name);
  const { canUndo, canRedo, undoLabel, redoLabel } = useProject((s) => s);
  const file = useRef<HTMLInputElement>(null);
  const [menu, setMenu] = useState<'examples' | 'recent' | null>(null);
  const [recent, setRecent] = useState<RecentEntry[]>([]);
  const st = projectStore.getState;

  // Read in the compile worker, with progress shown (loading.tsx): a large file leaves the page responsive.
  const open = (f: File) =>
    openDocument(
      f.name,
      f.size,
      () => f.text(),
      (doc) => replaceProject(doc, f.name),
    );
  const reopen = (e: RecentEntry) => {
    setMenu(null);
    void openDocument(
      `"${e.name}" from Recent`,
      e.text.length,
      () => e.text,
      (doc) => replaceProject(doc, `"${e.name}" from Recent`),
    );
  };

  return (
    <header className="toolbar" data-testid="toolbar">
      <div className="brand">Pipeloom</div>
      <div className="doc-name" title={`${name}: the project name (edit it in the inspector with nothing selected)`} data-testid="doc-name">
        {name}
      </div>
      <div className="tb-group">
        <button
          onClick={() => {
            if (confirm('Start a new empty project? Undo (Ctrl+Z) brings this one back, and Recent keeps it after a reload.'))
              replaceProject(newProject(), 'a new project');
          }}
          data-testid="new"
        >
          New
        </button>
        <button onClick={() => file.current?.click()} data-testid="open">
          Open…
        </button>
        <input
          ref={file}
          type="file"
          accept=".json,application/json"
          hidden
          data-testid="open-input"
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) void open(f);
            e.target.value = '';
          }}
        />
        <button onClick={() => download(st().doc)} data-testid="save">
          Save
        </button>
        <div className="menu-anchor">
          <button
            onClick={() => {
              setRecent(recentProjects());
              setMenu((m) => (m === 'recent' ? null : 'recent'));
            }}
            title="Projects you left by New, Open…, an example or another recent one, with their last edits"
            data-testid="recent"
          >
            Recent ▾
          </button>
          {menu === 'recent' && (
            <div className="menu" data-testid="recent-menu" onMouseLeave={() => setMenu(null)}>
              {recent.length === 0 && (
                <div className="menu-item muted">No recent projects yet: a project you leave by New, Open… or an example is kept here</div>
              )}
              {recent.map((e, i) => (
                <div key={`${e.savedAt}-${i}`} className="menu-item" data-testid={`recent-${i}`} onClick={() => reopen(e)}>
                  <b>{e.name}</b>
                  <span className="muted">
                    {e.nodes} node{e.nodes === 1 ? '' : 's'} · left {ago(e.savedAt)}
                  </span>
                </div>
              ))}
            </div>
          )}
        </div>
        <div className="menu-anchor">
          <button onClick={() => setMenu((m) => (m === 'examples' ? null : 'examples'))} data-testid="examples">
            Examples ▾
          </button>
          {menu === 'examples' && (
            <div className="menu" data-testid="examples-menu" onMouseLeave={() => setMenu(null)}>
              {examples.length === 0 && <div className="menu-item muted">No examples found</div>}
              {examples.map((ex) => (
                <div
                  key={ex.file}
                  className="menu-item"
                  data-testid={`example-${ex.file}`}
                  onClick={() => {
                    setMenu(null);
                    const r = fromValue(ex.doc);
                    if (r.doc) replaceProject(r.doc, ex.file);
                    else st().toast(`${ex.file}: ${r.diagnostics.map(formatDiagnostic).join('; ')}`, 'error');
                  }}
                >
                  <b>{ex.doc.name ?? ex.file}</b>
                  <span className="muted">{ex.file}</span>
                  {ex.doc.description && <span className="menu-desc">{ex.doc.description}</span>}
                </div>
              ))}
            </div>
          )}
        </div>
      </div>
      <div className="tb-group">
        <button disabled={!canUndo} onClick={() => st().undo()} title={`Undo ${undoLabel ?? ''} (Ctrl+Z)`} data-testid="undo">
          ↶ Undo
        </button>
        <button disabled={!canRedo} onClick={() => st().redo()} title={`Redo ${redoLabel ?? ''} (Ctrl+Shift+Z)`} data-testid="redo">
          ↷ Redo
        </button>
      </div>
      <nav className="tabs">
        {TABS.map((t) => (
          <button key={t.id} className={view === t.id ? 'on' : ''} onClick={() => st().setView(t.id)} title={`Alt+${t.key}`} data-testid={`tab-${t.id}`}>
            {t.label}
          </button>
        ))}
      </nav>
      {/* React Flow asks users who do not subscribe to Pro to keep its attribution; the canvases hide
          their own (it sat under the minimap), so the designer credits it once, here, always visible. */}
      <span className="credits">
        <a
          className="react-flow__attribution"
          href="https://reactflow.dev"
          target="_blank"
          rel="noopener noreferrer"
          title="The canvases are drawn with React Flow (MIT licence)"
          data-testid="attribution"
        >
          React Flow
        </a>
        {import.meta.env.PROD && (
          <a href="licenses.txt" target="_blank" rel="noopener noreferrer" title="Licences of the libraries bundled in the designer" data-testid="licenses">
            licences
          </a>
        )}
      </span>
    </header>
  );
}

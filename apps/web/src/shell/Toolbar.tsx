import { useRef, useState } from 'react';
import { emptyDocument as newProject, projectStore, useProject } from '../store/project.js';
import type { ViewId } from '../store/records.js';
import { download, fromValue, readDocument } from './documents.js';
import { examples } from './examples.js';
import { formatDiagnostic } from '@pipeloom/core';

const TABS: { id: ViewId; label: string; key: string }[] = [
  { id: 'dfg', label: 'Application', key: '1' },
  { id: 'arch', label: 'Architecture', key: '2' },
  { id: 'mapping', label: 'Mapping', key: '3' },
  { id: 'ig', label: 'Implementation', key: '4' },
  { id: 'run', label: 'Run', key: '5' },
];
export { TABS };

export function Toolbar() {
  const view = useProject((s) => s.view);
  const name = useProject((s) => s.doc.name);
  const { canUndo, canRedo, undoLabel, redoLabel } = useProject((s) => s);
  const file = useRef<HTMLInputElement>(null);
  const [menu, setMenu] = useState(false);
  const st = projectStore.getState;

  const open = async (f: File) => {
    const r = readDocument(await f.text());
    if (!r.doc) {
      st().toast(`Cannot open ${f.name}: ${r.diagnostics.map(formatDiagnostic).join('; ')}`, 'error');
      return;
    }
    st().load(r.doc);
    st().toast(`Opened ${f.name}`);
  };

  return (
    <header className="toolbar" data-testid="toolbar">
      <div className="brand">Pipeloom</div>
      <div className="doc-name" title={`${name}: the project name (edit it in the inspector with nothing selected)`} data-testid="doc-name">{name}</div>
      <div className="tb-group">
        <button onClick={() => { if (confirm('Start a new empty project? Unsaved changes stay only in the undo history of this tab.')) st().load(newProject()); }} data-testid="new">New</button>
        <button onClick={() => file.current?.click()} data-testid="open">Open…</button>
        <input ref={file} type="file" accept=".json,application/json" hidden data-testid="open-input" onChange={(e) => { const f = e.target.files?.[0]; if (f) void open(f); e.target.value = ''; }} />
        <button onClick={() => download(st().doc)} data-testid="save">Save</button>
        <div className="menu-anchor">
          <button onClick={() => setMenu((m) => !m)} data-testid="examples">Examples ▾</button>
          {menu && (
            <div className="menu" data-testid="examples-menu" onMouseLeave={() => setMenu(false)}>
              {examples.length === 0 && <div className="menu-item muted">No examples found</div>}
              {examples.map((ex) => (
                <div
                  key={ex.file}
                  className="menu-item"
                  data-testid={`example-${ex.file}`}
                  onClick={() => {
                    setMenu(false);
                    const r = fromValue(ex.doc);
                    if (r.doc) {
                      st().load(r.doc);
                      st().toast(`Loaded ${ex.file}`);
                    } else st().toast(`${ex.file}: ${r.diagnostics.map(formatDiagnostic).join('; ')}`, 'error');
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
        <button disabled={!canUndo} onClick={() => st().undo()} title={`Undo ${undoLabel ?? ''} (Ctrl+Z)`} data-testid="undo">↶ Undo</button>
        <button disabled={!canRedo} onClick={() => st().redo()} title={`Redo ${redoLabel ?? ''} (Ctrl+Shift+Z)`} data-testid="redo">↷ Redo</button>
      </div>
      <nav className="tabs">
        {TABS.map((t) => (
          <button key={t.id} className={view === t.id ? 'on' : ''} onClick={() => st().setView(t.id)} title={`Alt+${t.key}`} data-testid={`tab-${t.id}`}>
            {t.label}
          </button>
        ))}
      </nav>
    </header>
  );
}

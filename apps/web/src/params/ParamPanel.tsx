import { useEffect, useMemo, useRef, useState } from 'react';
import { paramTable, type DocumentParams, type Expr, type ParamDef, type ParamRow } from '@pipeloom/core';
import { projectStore, useProject } from '../store/project.js';
import { formatNumber } from '../lib/format.js';

// The document's parameters: each as written (a number or an expression), its value as core
// evaluates it (`paramTable`), its bounds and description. Editing one is an undoable change
// that recompiles; a bad expression is kept as typed and its problem, naming the parameter,
// is in the Problems list (and beside it here).

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A typed value: a number when it reads as one, else the expression as typed. */
export function writtenValue(text: string): Expr {
  const t = text.trim();
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
}

/** Why `name` cannot be a new parameter, or null. */
export function paramNameProblem(params: DocumentParams | undefined, name: string): string | null {
  if (!NAME.test(name)) return 'letters, digits and _, not starting with a digit';
  if (name === 'min' || name === 'max') return `"${name}" is a function of the expression language`;
  if (params && Object.hasOwn(params, name)) return `${name} exists`;
  return null;
}

function setParam(params: DocumentParams, name: string, text: string) {
  const old = params[name];
  const value = writtenValue(text);
  const next: Expr | ParamDef = typeof old === 'object' && old !== null ? { ...old, value } : value;
  projectStore.getState().dispatch({ type: 'param/set', name, value: next }, { label: `param ${name}` });
}

/** One parameter: its value or expression (Enter or leaving the field commits), evaluated value or problem, bounds, description. */
/** `ids` prefixes its test ids (`inspector-`), so the inspector's copy is told apart from the panel's. */
export function ParamEditor({ row, def, selected, ids = '' }: { row: ParamRow; def: Expr | ParamDef; selected: boolean; ids?: string }) {
  const params = useProject((s) => s.doc.params) ?? {};
  const shown = String(row.written);
  const [text, setText] = useState(shown);
  useEffect(() => setText(shown), [shown]);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (selected) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [selected]);
  const full = typeof def === 'object' && def !== null ? def : undefined;
  const commit = () => {
    if (text.trim() !== shown) setParam(params, row.name, text);
  };
  const bounds = [full?.min !== undefined ? `≥ ${full.min}` : '', full?.max !== undefined ? `≤ ${full.max}` : '', full?.integer ? 'integer' : '']
    .filter(Boolean)
    .join(', ');
  return (
    <div
      ref={ref}
      className={`param-row${selected ? ' selected' : ''}${row.error ? ' invalid' : ''}`}
      data-testid={`${ids}param-row-${row.name}`}
      onClick={() => projectStore.getState().select({ kind: 'param', name: row.name })}
    >
      <div className="param-head">
        <b className="mono">{row.name}</b>
        <input
          className="mono"
          value={text}
          spellCheck={false}
          data-testid={`${ids}param-value-${row.name}`}
          onChange={(e) => setText(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => {
            if (e.key === 'Enter') commit();
            if (e.key === 'Escape') setText(shown);
          }}
        />
        <button
          className="icon"
          title={`Remove ${row.name}`}
          data-testid={`${ids}param-remove-${row.name}`}
          onClick={(e) => {
            e.stopPropagation();
            projectStore.getState().dispatch({ type: 'param/set', name: row.name, value: null }, { label: `remove param ${row.name}` });
          }}
        >
          ×
        </button>
      </div>
      <div className="param-eval" data-testid={`${ids}param-eval-${row.name}`}>
        {row.value !== undefined ? <>= {formatNumber(row.value)}</> : <span className="field-error">{row.error}</span>}
        {bounds && <span className="muted"> ({bounds})</span>}
      </div>
      {full?.description && <div className="help">{full.description}</div>}
    </div>
  );
}

export function ParamPanel() {
  const params = useProject((s) => s.doc.params);
  const selection = useProject((s) => s.selection);
  // Evaluated on the main thread: a few expressions, no graph (compiling stays in the worker).
  const rows = useMemo(() => paramTable({ params } as Parameters<typeof paramTable>[0]), [params]);
  const [name, setName] = useState('');
  const problem = name ? paramNameProblem(params, name) : null;
  const add = () => {
    if (!name || problem) return;
    projectStore.getState().dispatch({ type: 'param/set', name, value: 1 }, { label: `add param ${name}` });
    projectStore.getState().select({ kind: 'param', name });
    setName('');
  };
  return (
    <div className="panel params" data-testid="param-panel">
      <div className="panel-title">Parameters</div>
      {rows.length === 0 && (
        <p className="help">
          None. Node params, rates and delays may read parameters: <code>2 * N</code>.
        </p>
      )}
      {rows.map((r) => (
        <ParamEditor key={r.name} row={r} def={params![r.name]} selected={selection?.kind === 'param' && selection.name === r.name} />
      ))}
      <div className="param-add">
        <input
          placeholder="new parameter"
          value={name}
          data-testid="param-add-name"
          onChange={(e) => setName(e.target.value)}
          onKeyDown={(e) => e.key === 'Enter' && add()}
        />
        <button onClick={add} disabled={!name || !!problem} data-testid="param-add">
          + Add
        </button>
      </div>
      {problem && <div className="field-error">{problem}</div>}
    </div>
  );
}

import { useMemo, useState } from 'react';
import { failingClause, parseRequires, WEBGPU_FEATURES, type AppNode, type PeCapabilities } from '@pipeloom/core';
import { appRun, useRun } from '../store/run/store.js';
import { projectStore } from '../store/project.js';
import type { GraphAt } from '../document/graphs.js';

// A kernel node's `requires` (docs/document-format.md, Requirements): clauses KEY OP VALUE, one
// per line, checked as typed; suggestions complete from what the connected agents report of
// their PEs (kind, software, backend, vendor, feature level, features, the buffer limits).

const dispatch: ReturnType<typeof projectStore.getState>['dispatch'] = (c, o) => projectStore.getState().dispatch(c, o);

/** Clauses a user may want, from the PEs the agents report (and the always-true generic ones). */
export function suggestions(caps: readonly PeCapabilities[]): string[] {
  const out = new Set<string>(['kind=gpu', 'kind=cpu', 'software=false', 'featureLevel>=core']);
  for (const c of caps) {
    if (c.backend) out.add(`backend=${c.backend}`);
    if (c.vendor && c.kind === 'gpu') out.add(`vendor=${c.vendor}`);
    for (const f of c.features ?? []) if (WEBGPU_FEATURES.includes(f)) out.add(`feature=${f}`);
    for (const l of ['maxStorageBufferBindingSize', 'maxBufferSize'] as const) if (c.limits?.[l]) out.add(`limit.${l}>=${c.limits[l]}`);
    if (c.cores) out.add(`cores>=${c.cores}`);
  }
  return [...out];
}

export function RequiresField({ node, at }: { node: AppNode; at?: GraphAt }) {
  const agents = useRun(appRun, (s) => s.agents);
  const caps = useMemo(() => agents.flatMap((a) => a.pes.flatMap((p) => (p.capabilities ? [p.capabilities] : []))), [agents]);
  const written = (node.requires ?? []).join('\n');
  const [text, setText] = useState(written);
  const [seen, setSeen] = useState(written);
  // The document changed under the field (undo, another node): show what it holds now.
  if (written !== seen) {
    setSeen(written);
    setText(written);
  }
  const clauses = text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  const parsed = parseRequires(clauses, 'requires');
  const problems = parsed.diagnostics;
  const commit = () => {
    if (problems.length || clauses.join('\n') === written) return;
    dispatch({ type: 'node/update', id: node.id, ...(at ? { at } : {}), requires: clauses.length ? clauses : null }, { label: `${node.id} requires` });
  };
  // Which connected PEs meet the clauses as typed.
  const matching =
    caps.length && !problems.length && clauses.length
      ? agents.flatMap((a) => a.pes.filter((p) => p.capabilities && !failingClause(p.capabilities, parsed.clauses))).map((p) => p.id)
      : undefined;
  return (
    <>
      <div className="insp-section" title="Clauses KEY OP VALUE the PE firing this node must meet (docs/document-format.md, Requirements)">
        Requires
      </div>
      <label className={`field${problems.length ? ' invalid' : ''}`}>
        <span className="field-label">clauses</span>
        <span className="field-input">
          <textarea
            className="mono"
            rows={Math.max(1, clauses.length)}
            value={text}
            placeholder="kind=gpu (one per line)"
            spellCheck={false}
            data-testid="inspector-requires"
            onChange={(e) => setText(e.target.value)}
            onBlur={commit}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) commit();
            }}
          />
        </span>
        {problems.length > 0 && (
          <span className="field-error" data-testid="inspector-requires-error">
            {problems[0].message}
            {problems[0].hint ? ` (${problems[0].hint})` : ''}
          </span>
        )}
      </label>
      <div className="insp-row help" data-testid="inspector-requires-suggestions">
        {suggestions(caps)
          .filter((s) => !clauses.includes(s))
          .slice(0, 8)
          .map((s) => (
            <button key={s} className="small chip" title="Add this clause" onClick={() => setText((t) => (t.trim() ? `${t.trim()}\n${s}` : s))}>
              {s}
            </button>
          ))}
      </div>
      {matching && (
        <div className="insp-row" data-testid="inspector-requires-matching">
          {matching.length ? `Met by ${matching.join(', ')}` : 'No connected PE meets these clauses'}
        </div>
      )}
    </>
  );
}

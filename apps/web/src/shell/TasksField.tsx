import { useMemo } from 'react';
import { FORMAT, lowerDocument, type AppNode, type Expr, type WrittenDocument } from '@pipeloom/core';
import type { KernelSpec } from '@pipeloom/kernels';
import { projectStore } from '../store/project.js';
import { scopeNames, type GraphAt } from '../document/graphs.js';
import { ExprField } from '../forms/fields.js';

// A kernel node's `tasks` (docs/document-format.md, Tasks): its kernel declares a split, and
// each firing runs as K shares of the split's range, summed in share order. Checked as typed by
// core itself, so the field says what the compile will ("tasks 200 > angles 180: ..."). Removing
// tasks is its own button: clearing the text while retyping must not drop the node's PE list
// (the store turns a list back to its first PE when tasks go: document/changes.ts).

const dispatch: ReturnType<typeof projectStore.getState>['dispatch'] = (c, o) => projectStore.getState().dispatch(c, o);

/** Most checks kept per field: one per distinct text typed, bounded. */
const CACHE = 64;

/**
 * Core's verdict on `tasks` for a node whose params are `resolved`'s (evaluated): what lowering
 * says of that node alone, mapped onto one PE, with the document's params in scope; null when it
 * has nothing to say about its tasks. The `node "id": ` prefix goes: the field is on that node.
 */
export function tasksProblem(doc: Pick<WrittenDocument, 'params'>, resolved: AppNode, tasks: Expr): string | null {
  const node: AppNode = {
    id: resolved.id,
    kernel: resolved.kernel,
    tasks,
    ...(resolved.params ? { params: resolved.params } : {}),
    ...(resolved.rates ? { rates: resolved.rates } : {}),
  };
  const probe: WrittenDocument = {
    format: FORMAT,
    name: 'tasks',
    ...(doc.params ? { params: doc.params } : {}),
    app: { nodes: [node], edges: [] },
    arch: { hosts: [{ id: 'h0' }], pes: [{ id: 'cpu@h0', host: 'h0', kind: 'cpu', memory: 2 ** 30 }], links: [] },
    mapping: { [node.id]: 'cpu@h0' },
    options: { overlap: false, iterations: 1 },
  };
  let diagnostics;
  try {
    diagnostics = lowerDocument(probe).diagnostics;
  } catch {
    return null; // a node the shape check refuses: validation names it in the Problems list
  }
  const d = diagnostics.find((x) => x.severity === 'error' && x.path.startsWith('app.nodes[0]') && (x.path.endsWith('.tasks') || /\btasks\b/.test(x.message)));
  if (!d) return null;
  const message = d.message.replace(/^node "[^"]*"( tasks)?: /, '');
  return d.hint ? `${message} (${d.hint})` : message;
}

export function TasksField({ doc, node, at, kernel, resolved }: { doc: WrittenDocument; node: AppNode; at?: GraphAt; kernel: KernelSpec; resolved: AppNode }) {
  const split = kernel.split;
  // Tasks set the split's count and index on each share: a node setting them itself loses them
  // when it gets tasks (core refuses both), in the same step.
  const params = useMemo(() => {
    if (!split || !node.params) return node.params;
    const rest = { ...node.params };
    delete rest[split.count];
    delete rest[split.index];
    return rest;
  }, [node.params, split]);
  const check = useMemo(() => {
    const seen = new Map<string, string | null>();
    const base = {
      ...resolved,
      params:
        split && resolved.params
          ? Object.fromEntries(Object.entries(resolved.params).filter(([k]) => k !== split.count && k !== split.index))
          : resolved.params,
    };
    return (v: Expr) => {
      const key = String(v);
      if (!seen.has(key)) {
        if (seen.size >= CACHE) seen.clear();
        seen.set(key, tasksProblem(doc, base, v));
      }
      return seen.get(key)!;
    };
  }, [doc.params, resolved, split]);
  const at$ = at ? { at } : {};
  const commit = (v: Expr | '', coalesce: string) => {
    if (v === '') return; // removing is the button's
    const dropped = params !== node.params;
    dispatch(
      { type: 'node/update', id: node.id, ...at$, tasks: v, ...(dropped ? { params: params && Object.keys(params).length ? params : null } : {}) },
      { label: `${node.id} tasks`, coalesce },
    );
  };
  const range = split && resolved.params?.[split.range];
  return (
    <>
      <div className="insp-section" title="Run each firing as this many shares, then sum them in share order (docs/document-format.md, Tasks)">
        Tasks
      </div>
      <ExprField
        label="tasks"
        value={node.tasks ?? ''}
        // Without tasks the field is empty and nothing is committed; with them, clearing it is a problem, not a removal.
        placeholder={node.tasks === undefined ? 'none: one firing' : undefined}
        evaluated={typeof resolved.tasks === 'number' ? resolved.tasks : undefined}
        names={scopeNames(doc, at)}
        unit="shares"
        testid="inspector-tasks"
        check={check}
        onCommit={commit}
      />
      <div className="param-doc" data-testid="inspector-tasks-doc">
        {split
          ? `Each firing as K shares of its ${split.range}${typeof range === 'number' ? ` (1 … ${range})` : ''}, share j taking ${split.range} j, j + K, ...; summed in share order. Sets ${split.count} and ${split.index} on each share. A node with tasks may be mapped onto several PEs.`
          : `${kernel.id} does not split: remove tasks.`}
      </div>
      {node.tasks !== undefined && (
        <button
          className="small"
          data-testid="inspector-tasks-remove"
          title="Run it as one firing again; a list of PEs keeps its first"
          onClick={() => dispatch({ type: 'node/update', id: node.id, ...at$, tasks: null }, { label: `${node.id}: no tasks` })}
        >
          Remove tasks
        </button>
      )}
    </>
  );
}

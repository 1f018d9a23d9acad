import { findKernel, formatDataType, portsFor, withDefaults } from '@pipeloom/kernels';
import type { AppEdge, Expr, WrittenDocument } from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { edgeKey } from '../document/records.js';
import { graphAt, instancePrefixes, scopeNames, type GraphAt } from '../document/graphs.js';
import { portTypeAt } from '../document/kernels.js';
import { useResolve } from '../store/resolve.js';
import { ExprField, NumberField, SelectField } from '../forms/fields.js';

// The inspector of a DFG edge: what it carries, and its delay (feedback): how many initial
// tokens it carries and their values, a constant or a source node of the same graph run once
// per token. An edge closing a loop needs a delay; the compiler names the least one that lets
// the loop run once per cycle on its PEs.

const dispatch: ReturnType<typeof projectStore.getState>['dispatch'] = (c, o) => projectStore.getState().dispatch(c, o);
const CONSTANT = '(constant)';

export function EdgeInspector({ doc, edge: e, at }: { doc: WrittenDocument; edge: AppEdge; at?: GraphAt }) {
  const resolve = useResolve();
  const g = graphAt(doc, at)!;
  const key = edgeKey(e);
  const src = g.nodes.find((n) => n.id === e.from.node);
  const t = src ? portTypeAt(doc, { at, prefix: instancePrefixes(doc, at)[0] ?? '', resolve }, src, e.from.port, 'out') : undefined;
  const update = (patch: { delay?: AppEdge['delay'] | null; init?: AppEdge['init'] | null }, label: string, coalesce?: string) =>
    dispatch({ type: 'edge/update', key, ...(at ? { at } : {}), ...patch }, { label, coalesce });
  // Source nodes of this graph (a kernel with no inputs, the edge's own ends aside) may give the initial values.
  const sources = g.nodes.filter((n) => {
    if (n.id === e.from.node || n.id === e.to.node || !n.kernel) return false;
    const k = findKernel(n.kernel);
    if (!k) return false;
    try {
      return portsFor(k, withDefaults(k, n.params as Record<string, number | string | boolean> | undefined)).inputs.length === 0;
    } catch {
      return false;
    }
  });
  const delayed = e.delay !== undefined && e.delay !== 0;
  const initNode = typeof e.init === 'object' && e.init && 'node' in e.init ? e.init.node : undefined;
  return (
    <>
      <div className="insp-kind">DFG edge</div>
      <div className="insp-row mono">
        {e.from.node}.{e.from.port} → {e.to.node}.{e.to.port}
      </div>
      <div className="insp-row">
        Carries <span className="mono">{t?.type ? formatDataType(t.type) : (t?.error ?? '?')}</span>
      </div>
      <div className="insp-section">Delay (feedback)</div>
      <ExprField
        label="initial tokens"
        title="Tokens the edge holds before the run: the consumer's iteration k reads the producer's k - delay (initial token k before that). A loop needs one."
        value={e.delay ?? ''}
        placeholder="0"
        names={scopeNames(doc, at)}
        min={0}
        integer
        testid="edge-delay"
        onCommit={(v: Expr | '', coalesce) => {
          const none = v === '' || v === 0;
          // A delay needs values for its tokens: zeros unless the user gives others.
          update({ delay: none ? null : v, init: none ? null : (e.init ?? 0) }, `${key} delay`, coalesce);
        }}
      />
      {delayed && (
        <>
          <SelectField
            label="values from"
            value={initNode ?? CONSTANT}
            options={[{ value: CONSTANT, label: 'a constant' }, ...sources.map((n) => ({ value: n.id, label: `node ${n.id} (${n.kernel})` }))]}
            testid="edge-init-source"
            onCommit={(v) => update({ init: v === CONSTANT ? 0 : { node: v } }, `${key} init`)}
          />
          {initNode === undefined && (
            <NumberField
              label="value"
              title="Every element of every initial token"
              value={typeof e.init === 'number' ? e.init : 0}
              testid="edge-init-value"
              onCommit={(v, coalesce) => update({ init: v }, `${key} init`, coalesce)}
            />
          )}
          {initNode !== undefined && (
            <div className="insp-row help">
              Node {initNode} runs once per initial token (its iteration = the token's index) before the run, and never in it.
            </div>
          )}
        </>
      )}
      <button className="danger" onClick={() => dispatch({ type: 'edge/remove', key, ...(at ? { at } : {}) })}>
        Delete edge
      </button>
    </>
  );
}

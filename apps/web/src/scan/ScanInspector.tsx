import { useMemo, useState, type ReactNode } from 'react';
import { findKernel, type ParamValue } from '@pipeloom/kernels';
import {
  MAX_SCAN_ELEMENTS,
  MAX_SCAN_WORKERS,
  SCAN_EXECUTIONS,
  SCAN_OUTPUTS,
  SCAN_STRATEGIES,
  scanModel,
  type AppNode,
  type WrittenDocument,
} from '@pipeloom/core';
import { projectStore } from '../store/project.js';
import { effectivePe, type GraphAt } from '../document/graphs.js';
import { pesOf } from '../document/targets.js';
import { portTypeAt, type PortContext } from '../document/kernels.js';
import { useResolve } from '../store/resolve.js';
import { formatDataType } from '@pipeloom/kernels';
import { appRun, useRun } from '../store/run/store.js';
import { freshness } from '../store/run/state.js';
import { NumberField, SelectField } from '../forms/fields.js';
import { binaryOperators, elementsWanted, networkOptions, operatorOwnParams, scanSettings, withOperator } from '../document/scanNode.js';
import { measuredScan } from './measured.js';
import { chartMaxP, SpeedupChart, useCurves } from './SpeedupChart.js';
import { ScanExpand } from './ScanExpand.js';
import { ScanTimeline } from './ScanTimeline.js';
import { historyKey, useScanHistory, type MeasuredPoint } from './history.js';
import { ParamEditor } from '../forms/ParamEditor.js';

// The inspector of a scan node: its operator (a binary kernel), network, output, strategy and
// execution, the operator's own params, its workers (an ordered PE list), and core's model of
// it, live as any of these or its N (what feeds `in`) change: applications per worker and
// stage, messages, span, work, speedup and the best p; Expand draws its DAG, Timeline its
// lanes per worker (simulated and measured, ScanTimeline.tsx), the chart its speedup against p
// beside the other networks' and every run's measured point. Every edit is one undoable change.

const dispatch: ReturnType<typeof projectStore.getState>['dispatch'] = (c, o) => projectStore.getState().dispatch(c, o);

/** N the model uses while nothing feeds `in` (a view setting, not written to the document). */
const DEFAULT_MODEL_N = 64;
/** Worker rows the table lists (the totals count them all). */
const MAX_ROWS = 32;

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(2));

export function ScanInspector(props: { doc: WrittenDocument; node: AppNode; at?: GraphAt; flatId: string; prefix: string; rename: ReactNode; pes: ReactNode }) {
  const { doc, node, at, flatId, prefix } = props;
  const resolve = useResolve();
  const resolved = resolve(flatId, node);
  const s = scanSettings(resolved);
  const written = (node.params ?? {}) as Record<string, ParamValue>;
  const at$ = at ? { at } : {};
  const set = (patch: Record<string, ParamValue>, what: string, coalesce?: string) =>
    dispatch({ type: 'node/update', id: node.id, ...at$, params: { ...written, ...patch } }, { label: `${node.id}.${what}`, coalesce });
  const operators = useMemo(() => binaryOperators(), []);
  const operatorKnown = operators.some((k) => k.id === s.operatorId);

  // N: what feeds `in`; until something does, the model's own N.
  const ctx: PortContext = { at, prefix, resolve };
  const fed = portTypeAt(doc, ctx, node, 'in', 'in');
  const fedN = fed.type?.shape[0];
  const [modelN, setModelN] = useState(DEFAULT_MODEL_N);
  const N = fedN ?? modelN;
  const pes = pesOf(effectivePe(doc.mapping, flatId).pe);
  const p = Math.max(1, pes.length);

  const why = !s.network
    ? `network ${JSON.stringify(written.network)} is not one core knows`
    : !s.output || !s.strategy || !s.execution
      ? 'output, strategy or execution is not one core knows'
      : p > N
        ? `${p} workers for ${N} elements: list at most ${N} PEs (every worker needs an element)`
        : p > MAX_SCAN_WORKERS
          ? `${p} workers: at most ${MAX_SCAN_WORKERS}`
          : N > MAX_SCAN_ELEMENTS
            ? `${N} elements: at most ${MAX_SCAN_ELEMENTS}`
            : null;
  const model = useMemo(
    () => (why ? null : scanModel(N, p, s.network!, s.strategy, s.output, s.execution)),
    [why, N, p, s.network, s.strategy, s.output, s.execution],
  );
  const maxP = chartMaxP(N, p);
  const curves = useCurves(N, maxP, why ? undefined : s.strategy, s.output, s.execution);
  const best = curves?.find((c) => c.network === s.network)?.best;

  // The measured point: the scan's fires in the trace of a run of the document as it is.
  const traceVersion = useRun(appRun, (r) => r.traceVersion);
  const current = useRun(appRun, (r) => freshness(r) === 'current');
  const measured = useMemo(
    () =>
      why || !current
        ? null
        : measuredScan(appRun.measured(), flatId, N, (q) => (q <= N ? scanModel(N, q, s.network!, s.strategy, s.output, s.execution).work : undefined)),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [why, current, traceVersion, flatId, N, s.network, s.strategy, s.output, s.execution],
  );
  // Every run's point with these settings (history.ts), and this run's while it is not recorded yet.
  const key = why ? null : historyKey(flatId, { N, network: s.network!, strategy: s.strategy!, output: s.output!, execution: s.execution! });
  const recorded = useScanHistory((h) => (key ? h.points[key] : undefined));
  const runs = useScanHistory((h) => h.runs);
  const points = useMemo<MeasuredPoint[]>(() => {
    const list = recorded ?? [];
    return measured && !list.some((q) => q.run === runs) ? [...list, { ...measured, run: runs }] : list;
  }, [recorded, measured, runs]);
  const earlier = points.filter((q) => !measured || q.run !== runs);
  const [expanded, setExpanded] = useState(false);
  const [timeline, setTimeline] = useState(false);

  return (
    <>
      <div className="insp-kind">Scan node{prefix ? <span className="muted"> in {prefix.slice(0, -1)}</span> : null}</div>
      {props.rename}
      <p className="help">
        A prefix scan over a binary operator: each worker scans its block of <code>in</code>, a prefix network combines the block totals, each worker adds its
        prefix (docs/document-format.md, Scan nodes).
      </p>
      <SelectField
        label="operator"
        value={s.operatorId}
        testid="scan-operator"
        options={[
          ...(operatorKnown ? [] : [{ value: s.operatorId, label: `${s.operatorId || '(none)'}: not a binary operator` }]),
          ...operators.map((k) => ({ value: k.id, label: `${k.id} (${k.title})` })),
        ]}
        onCommit={(id) => {
          const k = findKernel(id);
          if (k?.binary) dispatch({ type: 'node/update', id: node.id, ...at$, params: withOperator(node.params, k) }, { label: `${node.id}.operator` });
        }}
      />
      {s.operator && (
        <div className="param-doc">
          {s.operator.binary!.associativity} associative, {s.operator.binary!.commutative ? 'commutative' : 'not commutative'},{' '}
          {s.operator.binary!.identity ? 'has an identity' : 'no identity'}
        </div>
      )}
      <SelectField
        label="network"
        value={String(written.network ?? 'kogge-stone')}
        testid="scan-network"
        options={networkOptions(written.network)}
        onCommit={(v) => set({ network: v }, 'network')}
      />
      <SelectField
        label="output"
        value={String(written.output ?? 'inclusive')}
        testid="scan-output"
        options={SCAN_OUTPUTS.map((v) => ({ value: v, label: v }))}
        onCommit={(v) => set({ output: v }, 'output')}
      />
      <SelectField
        label="strategy"
        value={String(written.strategy ?? 'scan-then-propagate')}
        testid="scan-strategy"
        options={SCAN_STRATEGIES.map((v) => ({ value: v, label: v }))}
        onCommit={(v) => set({ strategy: v }, 'strategy')}
      />
      <SelectField
        label="execution"
        value={String(written.execution ?? 'eager')}
        testid="scan-execution"
        options={SCAN_EXECUTIONS.map((v) => ({ value: v, label: v === 'rounds' ? 'rounds (a barrier per level)' : v }))}
        onCommit={(v) => set({ execution: v }, 'execution')}
      />
      {s.operator && operatorOwnParams(s.operator).length > 0 && <div className="insp-section">Operator parameters</div>}
      {s.operator &&
        operatorOwnParams(s.operator).map(([name, spec]) => (
          <ParamEditor
            key={`${node.id}.${s.operator!.id}.${name}`}
            doc={doc}
            at={at}
            name={name}
            spec={spec}
            value={written[name] ?? spec.default}
            evaluated={resolved.params?.[name]}
            onCommit={(v, coalesce) => v !== '' && set({ [name]: v }, name, coalesce)}
          />
        ))}
      {props.pes}

      <div className="insp-section">Model</div>
      {fedN !== undefined ? (
        <div className="insp-row" data-testid="scan-n">
          N = <b>{fedN}</b> <span className="muted">from what feeds in ({formatDataType(fed.type!)})</span>
        </div>
      ) : (
        <>
          <NumberField
            label="N (model only)"
            value={modelN}
            min={1}
            max={MAX_SCAN_ELEMENTS}
            integer
            unit="elements"
            testid="scan-model-n"
            title="Elements the model assumes until something feeds in; not written to the document"
            onCommit={(v) => setModelN(v)}
          />
          <div className="param-doc">Nothing feeds in yet: connect {elementsWanted(s)}; the model meanwhile assumes this N.</div>
        </>
      )}
      <div className="insp-row" data-testid="scan-p">
        p = <b>{p}</b>{' '}
        <span className="muted">
          {pes.length ? `worker${p > 1 ? 's' : ''}: ${pes.slice(0, 8).join(', ')}${pes.length > 8 ? ', …' : ''}` : 'not mapped: the model at one worker'}
        </span>
      </div>
      {why && (
        <p className="field-error" data-testid="scan-model-problem">
          No model: {why}.
        </p>
      )}
      {model && (
        <>
          <table className="ports scan-model" data-testid="scan-model">
            <tbody>
              <tr>
                <td>work</td>
                <td data-testid="scan-work">
                  <b>{model.work}</b> applications
                </td>
              </tr>
              <tr>
                <td>messages</td>
                <td data-testid="scan-messages">{model.messages}</td>
              </tr>
              <tr>
                <td>span</td>
                <td data-testid="scan-span">
                  {model.span.levels} levels ({model.span.levelsCounted} with identities) · depth {model.span.depth} · each worker one PE{' '}
                  <b>{model.span.serialised}</b>
                </td>
              </tr>
              <tr>
                <td>speedup</td>
                <td data-testid="scan-speedup">
                  (N − 1) / span = <b>{fmt(model.speedup)}</b> <span className="muted">(over the dataflow depth: {fmt(model.speedupDataflow)})</span>
                </td>
              </tr>
              {best && (
                <tr>
                  <td>best p</td>
                  <td data-testid="scan-best">
                    {best.p}{' '}
                    <span className="muted">
                      (speedup {fmt(best.speedup)}; p ≤ {maxP})
                    </span>
                  </td>
                </tr>
              )}
              <tr>
                <td>network</td>
                <td data-testid="scan-network-part">
                  {model.networkPart.applications} applications ({model.networkPart.fired} fired) in {model.networkPart.levels} levels, on the {p} block totals
                </td>
              </tr>
              <tr>
                <td>nodes</td>
                <td>{model.nodes} expanded nodes (one firing each)</td>
              </tr>
            </tbody>
          </table>
          <table className="ports scan-workers" data-testid="scan-workers">
            <thead>
              <tr title="Applications per stage, then messages sent and received">
                <th>worker</th>
                <th>block</th>
                <th>local</th>
                <th>network</th>
                <th>2nd</th>
                <th>sent</th>
                <th>recv</th>
              </tr>
            </thead>
            <tbody>
              {model.workers.slice(0, MAX_ROWS).map((w, i) => (
                <tr key={i} data-testid={`scan-worker-${i}`} title={pes[i] ? `worker ${i} on ${pes[i]}` : undefined}>
                  <td>w{i}</td>
                  <td className="mono">{w.count ? `${w.lo}…${w.lo + w.count - 1}` : '—'}</td>
                  <td>{w.local.applications}</td>
                  <td>{w.network.applications}</td>
                  <td>{w.prop.applications}</td>
                  <td>{w.local.sends + w.network.sends + w.prop.sends}</td>
                  <td>{w.local.receives + w.network.receives + w.prop.receives}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {model.workers.length > MAX_ROWS && <div className="param-doc">… and {model.workers.length - MAX_ROWS} more workers (counted above).</div>}
          <div className="insp-actions">
            <button
              onClick={() => setExpanded(true)}
              data-testid="scan-expand-open"
              title="Draw the scan's DAG: workers as columns, stages and network levels as rows"
            >
              Expand
            </button>
            <button
              onClick={() => setTimeline(true)}
              data-testid="scan-timeline-open"
              title="Lanes per worker on one time axis: core's simulation at a mean cost, the simulation replaying the last run's times, and the run's fires"
            >
              Timeline
            </button>
          </div>
          <div className="insp-section">Speedup against p</div>
          {curves && <SpeedupChart N={N} p={p} network={s.network!} curves={curves} maxP={maxP} measured={points} />}
          {measured && (
            <div className="param-doc" data-testid="scan-measured">
              Measured: {fmt(measured.speedup)} at p = {measured.p} (the last run, median of {measured.iterations} iterations; the operator's cost per
              application from its fires).
            </div>
          )}
          {earlier.length > 0 && (
            <div className="param-doc" data-testid="scan-measured-history">
              Earlier runs: {earlier.map((q) => `${fmt(q.speedup)} at p = ${q.p}`).join(', ')} (same N, network, strategy, output and execution).
            </div>
          )}
          {timeline && (
            <ScanTimeline
              id={flatId}
              doc={doc}
              N={N}
              p={p}
              network={s.network!}
              strategy={s.strategy!}
              output={s.output!}
              execution={s.execution!}
              pes={pes}
              operator={s.operator}
              own={s.own}
              onClose={() => setTimeline(false)}
            />
          )}
          {expanded && <ScanExpand id={flatId} N={N} p={p} network={s.network!} strategy={s.strategy!} output={s.output!} onClose={() => setExpanded(false)} />}
        </>
      )}
      <button
        className="danger"
        data-testid="inspector-delete"
        onClick={() => dispatch({ type: 'node/remove', id: node.id, ...at$ }, { label: `delete ${node.id}` })}
      >
        Delete node
      </button>
    </>
  );
}

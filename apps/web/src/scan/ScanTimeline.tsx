import { useId, useMemo } from 'react';
import { scanPlan, type ScanExecution, type ScanNetwork, type ScanOutput, type ScanStrategy, type WrittenDocument } from '@pipeloom/core';
import type { KernelSpec, Params } from '@pipeloom/kernels';
import { appRun, useRun } from '../store/run/store.js';
import { freshness } from '../store/run/state.js';
import { formatDuration, formatTime, ticks } from '../timeline/viewport.js';
import { wait as waitKind } from '../timeline/kinds/wait.js';
import { barrier as barrierKind } from '../timeline/kinds/barrier.js';
import { STAGE_COLORS } from './figure.js';
import { useCalibration } from '../store/calibration.js';
import { calibratedPerApplication, hintPerApplication, runFires, scanTimeline, type Band, type SliceKind } from './lanes.js';
import { scanMessages } from './messages.js';
import { payloadWords } from '../document/scanNode.js';
import { useEscapeToClose } from './overlay.js';

// The scan's predictor view: three bands of one lane per worker on one time axis,
// (a) core's simulation at a mean cost, (b) the simulation replaying the last run's measured
// node times, (c) that run's fires (lanes.ts makes them). Stages in Expand's colours, waits in
// the Run timeline's wait grey, a barrier relay in its barrier red, idle hatched, the critical
// path outlined. SVG: a scan of 64 workers is a few thousand boxes per band, drawn once.
// simulateScan runs here on the main thread, as the inspector's scanModel does: planning and
// simulating 64 workers takes 2-9 ms on the reference machine (2 cores), once per plan or run,
// never per frame; the compile worker would add a round trip and a wait behind its compiles.
// Routing messages between 64 workers' PEs (messages.ts: the architecture analysed, 4032 routes
// over 528 links) takes 6-20 ms there, once per architecture or worker list.

/** Lanes drawn per band (the makespans count every worker). */
export const MAX_LANES = 64;
const W = 960;
const GUTTER = 120;
const LANE = 9;
const GAP = 2;
const HEAD = 30;
const RULER = 22;

export const SLICE_COLORS: Record<SliceKind, string> = {
  local: STAGE_COLORS.local,
  network: STAGE_COLORS.network,
  prop: STAGE_COLORS.prop,
  barrier: barrierKind.color,
  other: '#64748b',
  wait: waitKind.color,
  idle: '#ffffff',
};
const CRITICAL = '#111827';
const LABEL: Record<SliceKind, string> = {
  local: 'local scan',
  network: 'network',
  prop: 'second stage',
  barrier: 'barrier',
  other: 'other firing on its PE',
  wait: 'wait',
  idle: 'idle',
};

export interface ScanTimelineProps {
  id: string;
  doc: WrittenDocument;
  N: number;
  p: number;
  network: ScanNetwork;
  strategy: ScanStrategy;
  output: ScanOutput;
  execution: ScanExecution;
  /** The workers' PEs, in order. */
  pes: readonly string[];
  operator?: KernelSpec;
  own: Params;
  onClose: () => void;
}

export function ScanTimeline(props: ScanTimelineProps) {
  const { id, doc, N, p, network, strategy, output, execution, pes, operator, own, onClose } = props;
  const plan = useMemo(() => scanPlan(N, p, network, strategy, output), [N, p, network, strategy, output]);
  const traceVersion = useRun(appRun, (r) => r.traceVersion);
  const current = useRun(appRun, (r) => freshness(r) === 'current');
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const run = useMemo(() => (current ? runFires(appRun.measured(), id, plan) : null), [current, traceVersion, id, plan]);
  // The operator's params come as a new object each render of the inspector: keyed by value, so
  // the simulations run again only when something they read changes.
  const ownKey = JSON.stringify(own);
  const pesKey = pes.join('\n');
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const hint = useMemo(() => (operator ? hintPerApplication(operator, own, doc, pes, p) : undefined), [operator, ownKey, doc.arch, pesKey, p]);
  const calibration = useCalibration((c) => c.calibration);
  const calibrated = useMemo(() => {
    const c = calibration && operator ? calibratedPerApplication(calibration, operator, own, pes, p) : undefined;
    return c && { ...c, date: calibration!.date };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [calibration, operator, ownKey, pesKey, p]);
  // The architecture's routes between the workers' PEs: analysed again only when the
  // architecture, the workers or the element's size change.
  const words = operator ? payloadWords(operator, own) : undefined;
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const sent = useMemo(() => scanMessages(doc, pes, words), [doc.arch, pesKey, words]);
  const messages = sent.messages;
  const data = useMemo(() => scanTimeline({ plan, execution, hint, run, calibrated, messages }), [plan, execution, hint, run, calibrated, messages]);
  const hatch = useId();

  useEscapeToClose(onClose);

  const lanes = Math.min(p, MAX_LANES);
  const bandHeight = HEAD + lanes * (LANE + GAP);
  const height = RULER + data.bands.length * bandHeight + 4;
  const tw = W - GUTTER - 8;
  const axis = data.axis > 0 ? data.axis : 1e-6;
  const x = (s: number) => GUTTER + (s / axis) * tw;
  const grid = ticks({ t0: 0, t1: axis * 1e6 }, tw, 90);
  const summary = `${id}: ${network} scan of ${N} elements on ${p} workers, ${execution}: ${data.bands.map((b) => `${b.title} ${formatDuration(b.makespan * 1e6)}`).join('; ')}`;

  return (
    <div
      className="scan-expand scan-timeline"
      role="dialog"
      aria-label={`The timeline of scan ${id}`}
      data-testid="scan-timeline"
      data-bands={data.bands.length}
    >
      <div className="scan-expand-head">
        <b>{id}</b>{' '}
        <span className="muted">
          {network} · N = {N} · p = {p} · {strategy} · {output} · {execution}
        </span>
        <span className="spacer" />
        <button className="icon" onClick={onClose} title="Close (Escape)" data-testid="scan-timeline-close">
          ×
        </button>
      </div>
      <ul className="scan-timeline-bands">
        {data.bands.map((b) => (
          <li key={b.id} data-testid={`scan-makespan-${b.id}`} data-seconds={b.makespan}>
            <b>{b.title}</b>: makespan <b>{formatDuration(b.makespan * 1e6)}</b>{' '}
            <span className="muted">
              ({b.source}
              {b.criticalPath.length ? `; critical path ${b.criticalPath.length} nodes` : ''})
            </span>
          </li>
        ))}
      </ul>
      {data.notes.map((n) => (
        <p key={n} className="help" data-testid="scan-timeline-note">
          {n}
        </p>
      ))}
      {p > MAX_LANES && (
        <p className="help">
          The first {MAX_LANES} of {p} workers are drawn; the makespans count them all.
        </p>
      )}
      <div className="scan-expand-body">
        <svg
          width="100%"
          viewBox={`0 0 ${W} ${height}`}
          role="img"
          aria-label={summary}
          data-testid="scan-timeline-svg"
          style={{ minWidth: W / 1.5, display: 'block' }}
        >
          <defs>
            <pattern id={hatch} width={6} height={6} patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
              <rect width={6} height={6} fill="#fff" />
              <line x1={0} y1={0} x2={0} y2={6} stroke="#cbd5e1" strokeWidth={2} />
            </pattern>
          </defs>
          {grid.times.map((t) => (
            <g key={t}>
              <line x1={x(t / 1e6)} y1={RULER - 6} x2={x(t / 1e6)} y2={height} stroke="rgba(100,116,139,0.15)" />
              <text x={x(t / 1e6) + 3} y={12} fontSize={10} fill="#6b7280">
                {formatTime(t, grid.step)}
              </text>
            </g>
          ))}
          {data.bands.map((b, i) => (
            <BandView key={b.id} band={b} top={RULER + i * bandHeight} lanes={lanes} pes={pes} x={x} hatch={hatch} />
          ))}
        </svg>
      </div>
      <div className="scan-legend">
        {(['local', 'network', 'prop', 'barrier', 'other', 'wait'] as const).map((k) => (
          <span key={k}>
            <span className="swatch" style={{ background: SLICE_COLORS[k] }} /> {LABEL[k]}
          </span>
        ))}
        <span>
          <span className="swatch hollow" style={{ borderColor: '#cbd5e1', background: 'repeating-linear-gradient(45deg, #fff 0 2px, #cbd5e1 2px 4px)' }} />{' '}
          idle
        </span>
        <span>
          <span className="swatch hollow" style={{ borderColor: CRITICAL }} /> critical path
        </span>
        <span className="muted" data-testid="scan-timeline-messages" data-element-bytes={messages?.elementBytes}>
          {messages ? messages.summary : `Messages cost nothing in the simulations: ${sent.why}.`}
        </span>
      </div>
    </div>
  );
}

function BandView({
  band,
  top,
  lanes,
  pes,
  x,
  hatch,
}: {
  band: Band;
  top: number;
  lanes: number;
  pes: readonly string[];
  x: (s: number) => number;
  hatch: string;
}) {
  return (
    <g data-testid={`scan-band-${band.id}`} data-makespan={band.makespan} data-lanes={Math.min(lanes, band.lanes.length)}>
      <line x1={0} y1={top + 1} x2={W} y2={top + 1} stroke="#e3e6eb" />
      <text x={4} y={top + 18} fontSize={12} fill="#1f2430">
        <tspan fontWeight={600}>{band.title}</tspan>
        <tspan fill="#6b7280"> · makespan {formatDuration(band.makespan * 1e6)}</tspan>
      </text>
      <line x1={x(band.makespan)} y1={top + HEAD - 4} x2={x(band.makespan)} y2={top + HEAD + lanes * (LANE + GAP)} stroke="#1f2430" strokeDasharray="3 2" />
      {band.lanes.slice(0, lanes).map((l) => {
        const y = top + HEAD + l.worker * (LANE + GAP);
        return (
          <g key={l.worker} data-testid={`scan-lane-${band.id}-${l.worker}`} data-worker={l.worker} data-busy={l.busy} data-wait={l.wait} data-idle={l.idle}>
            <text x={4} y={y + LANE - 1} fontSize={9} fill="#374151">
              w{l.worker}
              {pes[l.worker] ? ` ${pes[l.worker]}` : ''}
            </text>
            {/* Other firings under the scan's: a GPU PE's firings may overlap (several dispatches in flight). */}
            {[...l.slices.filter((s) => s.kind === 'other'), ...l.slices.filter((s) => s.kind !== 'other')].map((s, k) => (
              <rect
                key={k}
                data-kind={s.kind}
                data-node={s.key || undefined}
                data-critical={s.critical || undefined}
                x={x(s.start)}
                y={y}
                width={Math.max(0.5, x(s.end) - x(s.start))}
                height={LANE}
                fill={s.kind === 'idle' ? `url(#${hatch})` : SLICE_COLORS[s.kind]}
                stroke={s.critical ? CRITICAL : undefined}
                strokeWidth={s.critical ? 1.5 : undefined}
              >
                <title>{`${s.key ? `${s.key} (${LABEL[s.kind]})` : LABEL[s.kind]}: ${formatDuration(s.start * 1e6)} to ${formatDuration(s.end * 1e6)}${s.queued !== undefined ? ` (started at ${formatDuration(s.queued * 1e6)}, in flight behind the firing before it on its PE)` : ''}${s.critical ? ', on the critical path' : ''}`}</title>
              </rect>
            ))}
          </g>
        );
      })}
    </g>
  );
}

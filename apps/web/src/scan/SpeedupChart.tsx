import { useMemo } from 'react';
import { NETWORKS, speedupCurve, type ScanExecution, type ScanNetwork, type ScanOutput, type ScanStrategy } from '@pipeloom/core';
import type { MeasuredPoint } from './history.js';

// Speedup (N - 1) / span against the number of workers p for every network at this N (figures
// 4.6-4.7), from core's speedupCurve; the node's own network drawn bold, its p marked, and the
// measured point of every run of it with these settings (history.ts), the latest filled, the
// earlier ones hollow. SVG: no dependency.

/**
 * The workers the chart sweeps: p = 1 .. 32, or to the node's own p beyond that, at most 128 and
 * N. Each p is one model of each network, on the main thread (5 networks to p = 32 take tens of
 * ms on the reference machine, to 128 about 300 ms), computed again only when N, strategy,
 * output, execution or this range change: the network and a p within it only redraw.
 */
export const CHART_P = 32;
export const CHART_MAX_P = 128;

export const NETWORK_COLORS: Record<ScanNetwork, string> = {
  serial: '#6b7280',
  'kogge-stone': '#2563eb',
  sklansky: '#059669',
  'brent-kung': '#d97706',
  blelloch: '#9333ea',
};

const W = 300;
const H = 170;
const PAD = { l: 34, r: 8, t: 8, b: 26 };

/** The p the chart sweeps to. */
export const chartMaxP = (N: number, p: number) => Math.max(1, Math.min(N, CHART_MAX_P, Math.max(CHART_P, p)));

export type Curves = ({ network: ScanNetwork } & ReturnType<typeof speedupCurve>)[];

/** Every network's speedup curve at N over p = 1 .. maxP (memoised on what they depend on). */
export function useCurves(
  N: number,
  maxP: number,
  strategy: ScanStrategy | undefined,
  output: ScanOutput | undefined,
  execution: ScanExecution | undefined,
): Curves | null {
  return useMemo(
    () => (strategy && output && execution ? NETWORKS.map((n) => ({ network: n, ...speedupCurve(N, n, maxP, strategy, output, execution) })) : null),
    [N, maxP, strategy, output, execution],
  );
}

export const MEASURED_COLOR = '#dc2626';

export function SpeedupChart(props: { N: number; p: number; network: ScanNetwork; curves: Curves; maxP: number; measured?: readonly MeasuredPoint[] }) {
  const { N, p, network, curves, maxP } = props;
  const measured = props.measured ?? [];
  const latest = measured.reduce<MeasuredPoint | undefined>((a, q) => (!a || q.run > a.run ? q : a), undefined);
  const top = Math.max(1, ...curves.flatMap((c) => c.points.map((q) => q.speedup)), ...measured.map((q) => q.speedup)) * 1.08;
  const right = Math.max(maxP, ...measured.map((q) => q.p), p);
  const x = (v: number) => PAD.l + (right <= 1 ? 0 : ((v - 1) / (right - 1)) * (W - PAD.l - PAD.r));
  const y = (v: number) => H - PAD.b - (v / top) * (H - PAD.t - PAD.b);
  const own = curves.find((c) => c.network === network)!;
  const here = own.points.find((q) => q.p === p);
  const ticks = (max: number, n: number) => [...new Set(Array.from({ length: n + 1 }, (_, i) => Math.round((max * i) / n)))];
  return (
    <figure className="scan-chart" data-testid="scan-chart">
      <svg
        width={W}
        height={H}
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={`Speedup against workers p = 1 to ${right} at N = ${N}: ${curves.map((c) => `${c.network} best ${c.best.speedup.toFixed(2)} at p = ${c.best.p}`).join('; ')}${here ? `; this node ${here.speedup.toFixed(2)} at p = ${p}` : ''}${measured.length ? `; measured ${measured.map((q) => `${q.speedup.toFixed(2)} at p = ${q.p}`).join(', ')}` : ''}`}
      >
        <line x1={PAD.l} y1={H - PAD.b} x2={W - PAD.r} y2={H - PAD.b} stroke="#9ca3af" />
        <line x1={PAD.l} y1={PAD.t} x2={PAD.l} y2={H - PAD.b} stroke="#9ca3af" />
        {ticks(right - 1, 4).map((t) => (
          <text key={`x${t}`} x={x(t + 1)} y={H - PAD.b + 12} fontSize={9} textAnchor="middle" fill="#6b7280">
            {t + 1}
          </text>
        ))}
        {ticks(Math.floor(top), 3).map((t) => (
          <text key={`y${t}`} x={PAD.l - 4} y={y(t) + 3} fontSize={9} textAnchor="end" fill="#6b7280">
            {t}
          </text>
        ))}
        <text x={(W + PAD.l) / 2} y={H - 2} fontSize={9} textAnchor="middle" fill="#6b7280">
          workers p
        </text>
        {curves.map((c) => (
          <polyline
            key={c.network}
            data-testid={`scan-chart-${c.network}`}
            points={c.points.map((q) => `${x(q.p).toFixed(1)},${y(q.speedup).toFixed(1)}`).join(' ')}
            fill="none"
            stroke={NETWORK_COLORS[c.network]}
            strokeWidth={c.network === network ? 2.5 : 1}
            opacity={c.network === network ? 1 : 0.7}
          />
        ))}
        {here && <circle data-testid="scan-chart-current" cx={x(p)} cy={y(here.speedup)} r={4} fill={NETWORK_COLORS[network]} stroke="#fff" />}
        {measured.map((q) => (
          <rect
            key={q.run}
            data-testid="scan-chart-measured"
            data-p={q.p}
            data-speedup={q.speedup}
            data-latest={q === latest}
            x={x(q.p) - 4}
            y={y(q.speedup) - 4}
            width={8}
            height={8}
            transform={`rotate(45 ${x(q.p)} ${y(q.speedup)})`}
            fill={q === latest ? MEASURED_COLOR : '#fff'}
            stroke={MEASURED_COLOR}
            strokeWidth={1.5}
          >
            <title>{`run ${q.run}: measured ${q.speedup.toFixed(2)} at p = ${q.p} (median of ${q.iterations} iterations)`}</title>
          </rect>
        ))}
      </svg>
      <figcaption className="scan-legend">
        {curves.map((c) => (
          <span key={c.network} title={`best p = ${c.best.p}: speedup ${c.best.speedup.toFixed(2)}`}>
            <span className="swatch" style={{ background: NETWORK_COLORS[c.network] }} /> {c.network}
          </span>
        ))}
        {measured.length > 0 && (
          <span title="Each run's measured speedup at its p; the latest filled">
            <span className="swatch" style={{ background: MEASURED_COLOR }} /> measured ({measured.length} run{measured.length > 1 ? 's' : ''})
          </span>
        )}
      </figcaption>
    </figure>
  );
}

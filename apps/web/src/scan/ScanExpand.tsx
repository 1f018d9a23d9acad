import { useEffect, useMemo, useRef, useState } from 'react';
import { scanPlan, type ScanNetwork, type ScanOutput, type ScanStrategy } from '@pipeloom/core';
import { scanFigure, STAGE_COLORS, type Dot, type ScanFigure } from './figure.js';
import { useEscapeToClose } from './overlay.js';

// Expand: the scan's DAG drawn as the thesis's figures 3.1-3.5 draw a network (figure.ts lays it
// out from core's plan): a column per worker, rows for the local scans, each network level and
// the second stage; applications as dots (boxes for a block's scan), data edges as lines, the
// identity applications hollow and faint beside them (free: nothing fires). A canvas, drawn once
// per plan; hovering a dot names it.

/** Most columns drawn (a wider scan is counted by the model, not drawn). */
export const FIGURE_MAX_COLUMNS = 64;
const CW = 54;
const RH = 46;
const LEFT = 96;
const TOP = 26;
const STAGE = STAGE_COLORS;

const at = (f: ScanFigure, d: Dot) => ({ x: LEFT + d.col * CW + CW / 2, y: TOP + d.row * RH + RH / 2 });

function draw(canvas: HTMLCanvasElement, f: ScanFigure) {
  const width = LEFT + f.columns * CW + 8;
  const height = TOP + f.rows.length * RH + 8;
  const dpr = globalThis.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const g = canvas.getContext('2d');
  if (!g) return; // no 2D canvas (jsdom): the label and the legend still say what it holds
  g.scale(dpr, dpr);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, width, height);
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  // Row bands and labels; column labels (a padded position belongs to the last worker).
  f.rows.forEach((label, r) => {
    if (r % 2) {
      g.fillStyle = '#f9fafb';
      g.fillRect(0, TOP + r * RH, width, RH);
    }
    g.fillStyle = '#374151';
    g.textAlign = 'left';
    g.fillText(label, 6, TOP + r * RH + RH / 2);
  });
  g.textAlign = 'center';
  for (let c = 0; c < f.columns; c++) {
    g.fillStyle = c < f.workers ? '#111827' : '#9ca3af';
    g.fillText(c < f.workers ? `w${c}` : 'pad', LEFT + c * CW + CW / 2, TOP / 2);
  }
  for (const l of f.lines) {
    const a = at(f, f.dots[l.from]);
    const b = at(f, f.dots[l.to]);
    g.strokeStyle = l.faint ? '#d1d5db' : '#6b7280';
    g.setLineDash(l.faint ? [3, 3] : []);
    g.lineWidth = l.faint ? 1 : 1.3;
    g.beginPath();
    g.moveTo(a.x, a.y);
    g.lineTo(b.x, b.y);
    g.stroke();
  }
  g.setLineDash([]);
  for (const d of f.dots) {
    const { x, y } = at(f, d);
    g.fillStyle = STAGE[d.kind];
    g.strokeStyle = STAGE[d.kind];
    if (d.kind === 'local' || d.kind === 'prop') {
      g.fillRect(x - 18, y - 9, 36, 18);
      g.fillStyle = '#fff';
      g.fillText(String(d.applications), x, y);
    } else if (d.kind === 'network') {
      g.beginPath();
      g.arc(x, y, 7, 0, 2 * Math.PI);
      g.fill();
    } else {
      g.fillStyle = '#fff';
      g.setLineDash(d.kind === 'free' ? [2, 2] : []);
      g.beginPath();
      g.arc(x, y, 6, 0, 2 * Math.PI);
      g.fill();
      g.stroke();
      g.setLineDash([]);
    }
  }
}

export function ScanExpand(props: { id: string; N: number; p: number; network: ScanNetwork; strategy: ScanStrategy; output: ScanOutput; onClose: () => void }) {
  const { id, N, p, network, strategy, output, onClose } = props;
  const figure = useMemo(() => scanFigure(scanPlan(N, p, network, strategy, output)), [N, p, network, strategy, output]);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<Dot | null>(null);
  const wide = figure.columns > FIGURE_MAX_COLUMNS;
  useEffect(() => {
    if (canvas.current && !wide) draw(canvas.current, figure);
  }, [figure, wide]);
  useEscapeToClose(onClose);
  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = e.clientX - r.left;
    const y = e.clientY - r.top;
    let best: Dot | null = null;
    for (const d of figure.dots) {
      const c = at(figure, d);
      if (Math.abs(c.x - x) < 18 && Math.abs(c.y - y) < 10) best = d;
    }
    setHover(best);
  };
  const c = figure.counts;
  const summary = `${id}: ${network} scan of ${N} elements on ${p} workers, ${strategy}, ${output}: ${c.nodes} expanded nodes; network ${figure.rows.length - 2} levels, ${c.fired} applications fired, ${c.free} free (an identity operand), ${c.pruned} not needed`;
  return (
    <div className="scan-expand" role="dialog" aria-label={`The DAG of scan ${id}`} data-testid="scan-expand">
      <div className="scan-expand-head">
        <b>{id}</b>{' '}
        <span className="muted">
          {network} · N = {N} · p = {p} · {strategy} · {output}
        </span>
        <span className="spacer" />
        <button className="icon" onClick={onClose} title="Close (Escape)" data-testid="scan-expand-close">
          ×
        </button>
      </div>
      <p className="help" data-testid="scan-expand-summary">
        {summary}.
      </p>
      {wide ? (
        <p className="help" data-testid="scan-expand-wide">
          {figure.columns} columns are more than the {FIGURE_MAX_COLUMNS} drawn: the model in the inspector counts this scan; list fewer workers to see its DAG.
        </p>
      ) : (
        <div className="scan-expand-body">
          <canvas
            ref={canvas}
            role="img"
            aria-label={summary}
            data-testid="scan-figure"
            data-dots={figure.dots.length}
            data-lines={figure.lines.length}
            onMouseMove={onMove}
            onMouseLeave={() => setHover(null)}
          />
        </div>
      )}
      <div className="scan-legend">
        <span>
          <span className="swatch" style={{ background: STAGE.local }} /> local scan (applications)
        </span>
        <span>
          <span className="swatch" style={{ background: STAGE.network }} /> network application
        </span>
        <span>
          <span className="swatch" style={{ background: STAGE.prop }} /> second stage
        </span>
        <span>
          <span className="swatch hollow" style={{ borderColor: STAGE.free }} /> identity (free)
        </span>
        <span>
          <span className="swatch hollow" style={{ borderColor: STAGE.pruned }} /> not needed
        </span>
        {hover && (
          <span className="mono" data-testid="scan-expand-hover">
            {hover.key ? `${id}/${hover.key}` : hover.kind === 'free' ? 'free: an identity operand' : 'not needed by any worker'} {hover.label}
            {hover.applications ? ` · ${hover.applications} application${hover.applications > 1 ? 's' : ''}` : ''}
          </span>
        )}
      </div>
    </div>
  );
}

import { useProject } from '../store/project.js';
import { peColor, memoryColor } from '../lib/color.js';
import { formatBytes, formatSeconds } from '../lib/format.js';
import { useShownStrategy } from './IgView.js';
import { usePickedBuffer } from './igSelection.js';
import { formatDataType } from '@pipeloom/kernels';
import { useMemo } from 'react';
import { bufferIndex, bufferNode, colorGroups, type ColorGroup } from '@pipeloom/core';

// Per-PE memory: every buffer's own storage (before) against storage shared by colour
// (after), the clique lower bound, and the PE's capacity.

/**
 * Colour chips shown per PE: a relay CPU of a large graph has hundreds of colours, and chips
 * for all of them were most of the 31,000 elements of a 10,000-node design's IG tab.
 */
const CHIPS = 24;
export function MemoryPanel() {
  const doc = useProject((s) => s.doc);
  const { strategy, result } = useShownStrategy();
  const other = result && strategy ? (strategy === result.overlap ? result.noOverlap : result.overlap) : null;
  const pred = result?.prediction ? (strategy === result.noOverlap ? result.prediction.noOverlap : result.prediction.overlap) : null;
  const picked = usePickedBuffer();
  const number = picked && strategy ? bufferIndex(strategy.ig, picked) : -1;
  const buffer = strategy && number >= 0 ? bufferNode(strategy.ig, number) : undefined;
  // Each PE's colours with their buffers (the IG keeps only each colour's bytes), by PE id.
  const groups = useMemo(() => {
    if (!strategy) return new Map<string, ColorGroup[]>();
    const all = colorGroups(strategy.ig);
    return new Map(strategy.ig.programs.pes.map(({ pe }, p) => [pe as string, all[p]]));
  }, [strategy]);
  return (
    <div className="panel" data-testid="memory-panel">
      {buffer && (
        <>
          <div className="panel-title">Buffer node</div>
          <div className="pred-box" data-testid="buffer-details">
            <div className="pred-big">{buffer.id}</div>
            <table className="phases">
              <tbody>
                <tr>
                  <td>on</td>
                  <td className="mono">{buffer.pe}</td>
                </tr>
                <tr>
                  <td>holds</td>
                  <td className="mono">
                    {buffer.source}.{buffer.port}
                  </td>
                </tr>
                <tr>
                  <td>type</td>
                  <td className="mono">{formatDataType(buffer.type)}</td>
                </tr>
                <tr>
                  <td>size</td>
                  <td className="mono">
                    {formatBytes(buffer.bytes)} × {buffer.depth} slot{buffer.depth > 1 ? 's' : ''}
                  </td>
                </tr>
                <tr>
                  <td>color</td>
                  <td>
                    <span className="color-chip" style={{ background: memoryColor(buffer.color) }}>
                      c{buffer.color}
                    </span>
                  </td>
                </tr>
                <tr>
                  <td>from</td>
                  <td className="mono">{'node' in buffer.from ? buffer.from.node : buffer.from.buffer}</td>
                </tr>
                <tr>
                  <td>read by</td>
                  <td className="mono">{buffer.consumers.map((c) => `${c.node}.${c.port}`).join(', ') || '—'}</td>
                </tr>
                <tr>
                  <td>copied to</td>
                  <td className="mono">{buffer.next.join(', ') || '—'}</td>
                </tr>
              </tbody>
            </table>
          </div>
        </>
      )}
      {pred && (
        <>
          <div className="panel-title">Predicted cycle</div>
          <div className="pred-box" data-testid="prediction-panel">
            <div className="pred-big">{formatSeconds(pred.cycleTime)}</div>
            <div className="muted">
              {pred.throughput.toFixed(1)} it/s · fill {pred.fillCycles} cycles · run {formatSeconds(pred.runTime)} for {pred.iterations} iterations
            </div>
            <table className="phases">
              <tbody>
                {pred.phases.map((ph) => (
                  <tr key={ph.name}>
                    <td title={ph.name}>{ph.name}</td>
                    <td className="mono">{formatSeconds(ph.time)}</td>
                    <td className="muted" title={ph.bottleneck} data-testid="phase-bottleneck">
                      {ph.bottleneck}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
      <div className="panel-title">Memory per PE</div>
      {!strategy && <div className="empty">No implementation graph yet.</div>}
      {strategy &&
        Object.entries(strategy.ig.memory)
          .filter(([, m]) => m.before > 0)
          .map(([pe, m]) => {
            const scale = Math.max(m.before, m.capacity > 0 && m.capacity < m.before * 4 ? m.capacity : 0, 1);
            const pct = (v: number) => `${Math.min(100, (v / scale) * 100)}%`;
            const over = m.capacity > 0 && m.after > m.capacity;
            const alt = other?.ig.memory[pe as keyof typeof other.ig.memory];
            const colors = groups.get(pe) ?? [];
            return (
              <div key={pe} className="mem" data-testid={`mem-${pe}`}>
                <div className="mem-title">
                  <span className="swatch" style={{ background: peColor(doc, pe) }} /> {pe}
                  {over && <span className="field-error"> over capacity</span>}
                </div>
                <div className="bar-row" title="Sum of every buffer's bytes × depth">
                  <span className="bar-label">before</span>
                  <span className="bar">
                    <span className="fill before" style={{ width: pct(m.before) }} />
                  </span>
                  <span className="bar-val" data-testid={`mem-before-${pe}`}>
                    {formatBytes(m.before)}
                  </span>
                </div>
                <div className="bar-row" title="Buffers of one colour share storage">
                  <span className="bar-label">after</span>
                  <span className="bar">
                    <span className="fill after" style={{ width: pct(m.after) }} />
                    <span className="mark" style={{ left: pct(m.lowerBound) }} title={`lower bound ${formatBytes(m.lowerBound)}`} />
                  </span>
                  <span className="bar-val" data-testid={`mem-after-${pe}`}>
                    {formatBytes(m.after)}
                  </span>
                </div>
                <div className="mem-meta">
                  saved {m.before > 0 ? Math.round((1 - m.after / m.before) * 100) : 0}% · bound {formatBytes(m.lowerBound)} · capacity{' '}
                  {formatBytes(m.capacity)}
                  {alt && alt.after !== m.after && (
                    <>
                      {' '}
                      · {strategy === result?.overlap ? 'no overlap' : 'overlap'}: {formatBytes(alt.after)}
                    </>
                  )}
                </div>
                <div className="colors">
                  {colors.slice(0, CHIPS).map((c) => (
                    <span
                      key={c.color}
                      className="color-chip"
                      style={{ background: memoryColor(c.color) }}
                      title={`colour ${c.color}: ${c.buffers.join(', ')}`}
                    >
                      c{c.color} {formatBytes(c.bytes)}
                    </span>
                  ))}
                  {colors.length > CHIPS && (
                    <span className="muted" data-testid={`mem-more-${pe}`}>
                      +{colors.length - CHIPS} more colors
                    </span>
                  )}
                </div>
              </div>
            );
          })}
    </div>
  );
}

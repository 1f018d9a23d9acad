import type { SinkWrite } from '@pipeloom/core';
import { formatBytes } from '../lib/format.js';

/**
 * What each sink wrote in the last run, as its agent reported it: the designer never reads an
 * agent's disk, so the path is the node's as written, under the agent's data root. Shown after
 * a failed or stopped run too: the files written before stay whole.
 */
export function Writes({ writes }: { writes?: SinkWrite[] }) {
  if (!writes?.length) return null;
  return (
    <>
      <h3>Written</h3>
      <table className="run-numbers run-writes" data-testid="run-writes">
        <thead>
          <tr>
            <th>Node</th>
            <th>Host</th>
            <th>Path</th>
            <th>Files</th>
            <th>Bytes</th>
            <th>Iterations</th>
          </tr>
        </thead>
        <tbody>
          {writes.map((w) => (
            <tr key={`${w.host}/${w.node}`} data-testid={`run-write-${w.node}`}>
              <td>{w.node}</td>
              <td title={`PE ${w.pe}`}>{w.host}</td>
              <td className="mono">{w.path}</td>
              <td>{w.files}</td>
              <td title={`${w.bytes} bytes`}>{formatBytes(w.bytes)}</td>
              <td>{w.iterations}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

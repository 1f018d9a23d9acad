import type { AppNode, ScanExecution, ScanNetwork, ScanOutput, ScanStrategy, WrittenDocument } from '@pipeloom/core';
import { effectivePe, walkInstances, type GraphAt } from '../document/graphs.js';
import { pesOf } from '../document/targets.js';
import { portTypeAt } from '../document/kernels.js';
import { resolver, type Resolve } from '../store/resolve.js';
import { isScan, scanSettings, type ScanSettings } from '../document/scanNode.js';

// Every scan node of a document as its views read it (flattened id, settings, N from what
// feeds `in`, its workers): what the run history records after a run and the Run view lists,
// read the way the inspector reads the selected one.

export interface ScanInstance {
  flatId: string;
  node: AppNode;
  at: GraphAt;
  /** `s1/` for a scan inside instance s1, '' at the top. */
  prefix: string;
  settings: ScanSettings;
  /** Elements: the first extent of what feeds `in`; undefined while nothing does. */
  N?: number;
  /** Its workers, in order (the mapping's PE list). */
  pes: string[];
}

/** Most scan nodes listed (a document has a handful; this bounds what a run's end computes). */
export const MAX_SCAN_INSTANCES = 64;

export function scanInstances(doc: WrittenDocument, resolve: Resolve = resolver(doc)): ScanInstance[] {
  const out: ScanInstance[] = [];
  walkInstances(doc, (n, flatId, at, level) => {
    if (!isScan(n) || out.length >= MAX_SCAN_INSTANCES) return;
    const prefix = level.length ? `${level.join('/')}/` : '';
    const fed = portTypeAt(doc, { at, prefix, resolve }, n, 'in', 'in').type;
    out.push({ flatId, node: n, at, prefix, settings: scanSettings(resolve(flatId, n)), N: fed?.shape[0], pes: pesOf(effectivePe(doc.mapping, flatId).pe) });
  });
  return out;
}

/** The settings core's model needs, when the scan has them all (a known network, output, strategy, execution, N >= p >= 1). */
export function modelled(
  s: ScanInstance,
): { N: number; p: number; network: ScanNetwork; strategy: ScanStrategy; output: ScanOutput; execution: ScanExecution } | null {
  const { network, strategy, output, execution } = s.settings;
  const p = Math.max(1, s.pes.length);
  if (!network || !strategy || !output || !execution || s.N === undefined || s.N < p) return null;
  return { N: s.N, p, network, strategy, output, execution };
}

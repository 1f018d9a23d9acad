import type { Model, ModelPe } from '../document/model.js';
import type { NodeId } from '../ids.js';

// Per-node kernel time and per-link transfer time, the predictor's inputs.

/** Rates used when a PE does not state its own (roughly a desktop CPU and a mid-range GPU). */
export const DEFAULT_RATES = {
  cpu: { flops: 5e10, memoryBandwidth: 2e10 },
  gpu: { flops: 1e12, memoryBandwidth: 1.5e11 },
} as const;

export interface TimingOptions {
  /** Measured seconds per firing, replacing the cost hints (e.g. from an agent's trace). */
  nodeTimes?: Record<string, number>;
  /**
   * Measured seconds per transfer, keyed `<from buffer>-><to buffer>` (the coordinator's
   * transfer key), replacing the link's latency + bytes / bandwidth.
   */
  transferTimes?: Record<string, number>;
}

/** Seconds one transfer takes: its override, or the link's latency + bytes / bandwidth. */
export function transferTime(from: string, to: string, bytes: number, link: { latency: number; bandwidth: number }, opts: TimingOptions = {}): number {
  const override = opts.transferTimes?.[`${from}->${to}`];
  return override !== undefined ? override : link.latency + bytes / link.bandwidth;
}

/** Seconds one firing of the node takes: its override, or flops / PE flop rate + bytes / PE memory bandwidth. */
export function nodeTime(model: Model, id: NodeId, opts: TimingOptions = {}): number {
  const override = opts.nodeTimes?.[id];
  if (override !== undefined) return override;
  const n = model.node.get(id)!;
  const pe = model.pe.get(n.pe)!;
  const cost = n.kernel.cost(n.params);
  return cost.flops / rate(pe).flops + cost.bytes / rate(pe).memoryBandwidth;
}

export function rate(pe: ModelPe): { flops: number; memoryBandwidth: number } {
  return { flops: pe.flops ?? DEFAULT_RATES[pe.kind].flops, memoryBandwidth: pe.memoryBandwidth ?? DEFAULT_RATES[pe.kind].memoryBandwidth };
}

import {
  findKernel,
  formatDataType,
  listKernels,
  portsFor,
  SCAN_ELEMENT,
  scanElementType,
  withDefaults,
  type DataType,
  type KernelSpec,
  type Params,
  type ParamValue,
} from '@pipeloom/kernels';
import {
  NETWORK_ALIASES,
  NETWORKS,
  resolveNetwork,
  SCAN_EXECUTIONS,
  SCAN_OUTPUTS,
  SCAN_PARAMS,
  SCAN_STRATEGIES,
  type AppNode,
  type ScanExecution,
  type ScanNetwork,
  type ScanOutput,
  type ScanStrategy,
} from '@pipeloom/core';

// A scan macro-node as the designer reads it (docs/document-format.md, Scan nodes): its own
// params (operator, network, output, strategy, execution), the operator's params (the rest),
// and its ports: `in` (N elements, N the first extent of what feeds it), the operator's context
// inputs, `out` (N) and `total` (1). Core lowers it; the designer only draws and edits it.

/** What the palette's Scan entry adds (the scan's defaults). */
export const SCAN_DEFAULTS = {
  operator: 'mat.mulmod',
  network: 'kogge-stone',
  output: 'inclusive',
  strategy: 'scan-then-propagate',
  execution: 'eager',
} as const;

export const isScan = (n: Pick<AppNode, 'type'> | undefined): boolean => n?.type === 'scan';

/** The kernels a scan may name as its operator: those whose spec declares `binary`. */
export function binaryOperators(): KernelSpec[] {
  return listKernels().filter((k) => k.binary !== undefined);
}

/** The operator's own params: every param but the scan's five and the modes' two (the expansion sets those). */
export function operatorOwnParams(operator: KernelSpec): [string, KernelSpec['params'][string]][] {
  return Object.entries(operator.params).filter(([name]) => name !== 'mode' && name !== 'count');
}

export interface ScanSettings {
  operatorId: string;
  /** The operator's kernel when it is a registered binary operator. */
  operator?: KernelSpec;
  /** The network the params name (an alias resolved); undefined for an unknown one. */
  network?: ScanNetwork;
  output?: ScanOutput;
  strategy?: ScanStrategy;
  execution?: ScanExecution;
  /** The operator's params as written (the node's params less the scan's own). */
  own: Params;
}

const oneOf = <T extends string>(v: ParamValue | undefined, values: readonly T[], fallback: T): T | undefined => {
  const x = v ?? fallback;
  return typeof x === 'string' && (values as readonly string[]).includes(x) ? (x as T) : undefined;
};

/** The scan node's settings, each undefined where the document names something core refuses (the Problems list says why). */
export function scanSettings(node: AppNode): ScanSettings {
  const params = (node.params ?? {}) as Record<string, ParamValue>;
  const operatorId = typeof params.operator === 'string' ? params.operator : '';
  const kernel = operatorId ? findKernel(operatorId) : undefined;
  const own: Params = {};
  for (const [k, v] of Object.entries(params)) if (!(SCAN_PARAMS as readonly string[]).includes(k)) own[k] = v;
  const net = params.network ?? SCAN_DEFAULTS.network;
  return {
    operatorId,
    operator: kernel?.binary ? kernel : undefined,
    network: typeof net === 'string' ? resolveNetwork(net) : undefined,
    output: oneOf(params.output, SCAN_OUTPUTS, 'inclusive'),
    strategy: oneOf(params.strategy, SCAN_STRATEGIES, 'scan-then-propagate'),
    execution: oneOf(params.execution, SCAN_EXECUTIONS, 'eager'),
    own,
  };
}

/** The params of a new scan node: the defaults, and the default operator's own params. */
export function newScanParams(): Params {
  const op = findKernel(SCAN_DEFAULTS.operator);
  const own = op ? Object.fromEntries(operatorOwnParams(op).map(([n, p]) => [n, p.default])) : {};
  return { ...SCAN_DEFAULTS, ...own };
}

/** The node's params with another operator: the scan's own kept, the operator's params it shares with the old one kept, the rest its defaults. */
export function withOperator(params: AppNode['params'], operator: KernelSpec): Params {
  const out: Params = {};
  for (const k of SCAN_PARAMS) if (params && Object.hasOwn(params, k)) out[k] = params[k];
  out.operator = operator.id;
  for (const [name, spec] of operatorOwnParams(operator)) out[name] = params && Object.hasOwn(params, name) ? params[name] : spec.default;
  return out;
}

/** Payload words W of one element (u32 [lo, hi, payload W]) for the operator's params; undefined when its ports cannot be read. */
export function payloadWords(operator: KernelSpec, own: Params): number | undefined {
  try {
    const p = withDefaults(operator, { ...own, mode: 'apply', count: 1 });
    const out = portsFor(operator, p).outputs.find((x) => x.name === 'out');
    const t = out?.type(p);
    return t && t.shape.length === 2 ? t.shape[1] - 2 : undefined;
  } catch {
    return undefined;
  }
}

/** The operator's context inputs (fed to every worker's applications), after the mode's. */
export function contextPorts(operator: KernelSpec | undefined): string[] {
  if (!operator?.binary) return [];
  return operator.binary.context ?? [];
}

/** The scan node's port names. */
export function scanPortNames(node: AppNode): { inputs: string[]; outputs: string[] } {
  return { inputs: ['in', ...contextPorts(scanSettings(node).operator)], outputs: ['out', 'total'] };
}

/** What `in` takes, in words: `N scan elements of mat.mulmod, u32 [N x 11]`. */
export function elementsWanted(s: ScanSettings): string {
  const w = s.operator ? payloadWords(s.operator, s.own) : undefined;
  return w === undefined ? `N scan elements of ${s.operatorId || 'its operator'}` : `N scan elements of ${s.operator!.id}, ${SCAN_ELEMENT}<u32>[N×${2 + w}]`;
}

/**
 * A scan port's type: `in` and `out` carry what feeds `in` (`fed`, N elements), `total` one
 * element, a context port the operator's type; an error says why it cannot be told.
 */
export function scanPortType(node: AppNode, port: string, side: 'in' | 'out', fed?: DataType): { type?: DataType; error?: string } {
  const s = scanSettings(node);
  if (!s.operator)
    return { error: s.operatorId ? `scan ${node.id}: ${s.operatorId} is not a registered binary operator` : `scan ${node.id} names no operator` };
  const w = payloadWords(s.operator, s.own);
  if (w === undefined) return { error: `scan ${node.id}: ${s.operator.id} gives no element type for these params` };
  if (side === 'out' && port === 'total') return { type: scanElementType(1, w) };
  if ((side === 'in' && port === 'in') || (side === 'out' && port === 'out')) {
    if (!fed) return { error: `${node.id}.${port}: ${elementsWanted(s)}; N comes from what feeds ${node.id}.in (not connected)` };
    return { type: side === 'out' ? scanElementType(fed.shape[0] ?? 1, w) : fed };
  }
  if (side === 'in' && contextPorts(s.operator).includes(port)) {
    try {
      const p = withDefaults(s.operator, { ...s.own, mode: 'apply', count: 1 });
      const spec = portsFor(s.operator, p).inputs.find((x) => x.name === port);
      if (spec) return { type: spec.type(p) };
    } catch (e) {
      return { error: `scan ${node.id}: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  return { error: `scan ${node.id} has no ${side === 'in' ? 'input' : 'output'} "${port}"` };
}

/** Why data of type `t` cannot feed the scan's `in`, or null: N >= 1 elements of the operator's element type. */
export function scanInProblem(node: AppNode, t: DataType): string | null {
  const s = scanSettings(node);
  if (!s.operator) return scanPortType(node, 'in', 'in').error ?? null;
  const w = payloadWords(s.operator, s.own);
  const ok = w !== undefined && t.kind === SCAN_ELEMENT && t.element === 'u32' && t.shape.length === 2 && t.shape[0] >= 1 && t.shape[1] === 2 + w;
  return ok ? null : `${node.id}.in takes ${elementsWanted(s)}, not ${formatDataType(t)}`;
}

/** The networks a select offers: core's, plus the alias the document names (shown as what it means). */
export function networkOptions(written: ParamValue | undefined): { value: string; label: string }[] {
  const out: { value: string; label: string }[] = NETWORKS.map((n) => ({ value: n, label: n }));
  if (typeof written === 'string' && Object.hasOwn(NETWORK_ALIASES, written)) out.push({ value: written, label: `${written} (= ${NETWORK_ALIASES[written]})` });
  return out;
}

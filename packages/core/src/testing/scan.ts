import { defineKernelSpec, findKernel, registerKernels, type DataType, type KernelSpec, type Params, type PortSpec } from '@pipeloom/kernels/specs';
import type { AppNode, ProjectDocument, WrittenDocument } from '../document/types.js';

// For tests only: a range operator of the scan kernel contract (the operator kernels
// are written in packages/kernels; this one has exactly their ports, so the expansion is tested
// whatever their timing), a source of N elements and a sink, and a scan document builder.
// Elements are u32 words [lo, hi, payload(w)]; `test.range` joins ranges.

const element = (m: number, w: number): DataType => ({ kind: 'scan-element', element: 'u32', shape: [m, 2 + w] });
const port = (name: string, m: (p: Params) => number): PortSpec => ({ name, type: (p) => element(m(p), Number(p.w)) });
const count = (p: Params) => Number(p.count);
const one = () => 1;

function rangePorts(p: Params): { inputs: PortSpec[]; outputs: PortSpec[] } {
  const context = p.context ? [{ name: 'frames', type: () => ({ kind: 'bytes', element: 'u32' as const, shape: [4] }) }] : [];
  switch (String(p.mode)) {
    case 'apply':
      return { inputs: [port('a', one), port('b', one), ...context], outputs: [port('out', one)] };
    case 'scan':
    case 'exclusive':
      return { inputs: [port('in', count), ...context], outputs: [port('out', count), port('total', one)] };
    case 'reduce':
      return { inputs: [port('in', count), ...context], outputs: [port('total', one)] };
    case 'propagate':
      return { inputs: [port('prefix', one), port('block', count), ...context], outputs: [port('out', count)] };
    default:
      throw new Error(`param mode: "${String(p.mode)}" is not apply, scan, reduce, propagate or exclusive`);
  }
}

const modeParams = {
  mode: { type: 'enum' as const, default: 'apply', values: ['apply', 'scan', 'reduce', 'propagate', 'exclusive'], description: 'What one firing does' },
  count: { type: 'int' as const, default: 1, min: 1, max: 1 << 26, description: 'Elements per port (m)' },
  w: { type: 'int' as const, default: 0, min: 0, max: 64, description: 'Payload words per element' },
};

export const TEST_RANGE = 'test.range';

export function registerScanTestKernels(): void {
  if (findKernel(TEST_RANGE)) return;
  const specs: KernelSpec[] = [
    {
      ...defineKernelSpec({
        id: TEST_RANGE,
        version: '1.0.0',
        description: "Joins ranges [lo, hi] (the scan contract's ports)",
        params: { ...modeParams, context: { type: 'bool', default: false, description: 'Has a context input `frames`' } },
        inputs: rangePorts({ mode: 'apply', w: 0, count: 1 }).inputs,
        outputs: rangePorts({ mode: 'apply', w: 0, count: 1 }).outputs,
        ports: rangePorts,
        cost: (p) => ({ flops: 1e6 * Math.max(1, Number(p.count)), bytes: 0 }),
      }),
      binary: { associativity: 'exact', commutative: false, identity: true },
    } as KernelSpec,
    {
      ...defineKernelSpec({
        id: 'test.noassoc',
        version: '1.0.0',
        description: 'A binary operator that is not associative',
        params: modeParams,
        ports: rangePorts,
        inputs: rangePorts({ mode: 'apply', w: 0, count: 1 }).inputs,
        outputs: rangePorts({ mode: 'apply', w: 0, count: 1 }).outputs,
        cost: () => ({ flops: 1, bytes: 0 }),
      }),
      binary: { associativity: 'none', commutative: false },
    } as KernelSpec,
    defineKernelSpec({
      id: 'test.elements',
      version: '1.0.0',
      description: 'Makes n elements [i, i]',
      params: { n: { type: 'int', default: 8, min: 1, max: 1 << 20, description: 'Elements' }, w: modeParams.w },
      outputs: [{ name: 'out', type: (p) => element(Number(p.n), Number(p.w)) }],
      cost: () => ({ flops: 1, bytes: 0 }),
    }),
    defineKernelSpec({
      id: 'test.sink',
      version: '1.0.0',
      description: 'Takes n elements',
      params: { n: { type: 'int', default: 8, min: 1, max: 1 << 20, description: 'Elements' }, w: modeParams.w },
      inputs: [{ name: 'in', type: (p) => element(Number(p.n), Number(p.w)) }],
      cost: () => ({ flops: 1, bytes: 0 }),
    }),
  ];
  registerKernels(specs, 'testing/scan');
}

/** A document: test.elements (N) -> scan1 (the params given) -> test.sink (N) and its total -> test.sink (1), on p hosts' CPUs. */
export function scanDocument(
  N: number,
  p: number,
  scan: Record<string, string | number | boolean>,
  opts: { hosts?: number; pes?: string[] } = {},
): WrittenDocument {
  const hosts = opts.hosts ?? p;
  const pes = opts.pes ?? Array.from({ length: p }, (_, i) => `cpu@h${i % hosts}`);
  const nodes: AppNode[] = [
    { id: 'src', kernel: 'test.elements', params: { n: N } },
    { id: 'scan1', type: 'scan', params: { operator: TEST_RANGE, network: 'kogge-stone', ...scan } },
    { id: 'sink', kernel: 'test.sink', params: { n: N } },
    { id: 'tot', kernel: 'test.sink', params: { n: 1 } },
  ];
  const doc: ProjectDocument<string | string[]> = {
    format: 'pipeloom/v2',
    name: 'scan',
    app: {
      nodes,
      edges: [
        { from: { node: 'src', port: 'out' }, to: { node: 'scan1', port: 'in' } },
        { from: { node: 'scan1', port: 'out' }, to: { node: 'sink', port: 'in' } },
        { from: { node: 'scan1', port: 'total' }, to: { node: 'tot', port: 'in' } },
      ],
    },
    arch: {
      hosts: Array.from({ length: hosts }, (_, i) => ({ id: `h${i}`, cpus: 1 })),
      pes: [],
      links: [],
      network: { kind: 'ethernet', bandwidth: 1e9, latency: 1e-5 },
    },
    mapping: { src: 'cpu@h0', scan1: pes, sink: `cpu@h${hosts - 1}`, tot: 'cpu@h0' },
    options: { overlap: false, iterations: 2 },
  };
  return doc;
}

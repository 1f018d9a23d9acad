import { DOCUMENT_DEFAULTS, type Link, type LinkKind, type PeKind, type ProcessingElement, type WrittenDocument } from '@pipeloom/core';
import { formatRate, formatSeconds } from '../lib/format.js';

// Sensible starting values for new architecture elements; the inspector edits them.

export const LINK_DEFAULTS: Record<LinkKind, { bandwidth: number; latency: number; duplex: boolean }> = {
  pcie: { bandwidth: 12e9, latency: 10e-6, duplex: true },
  nvlink: { bandwidth: 50e9, latency: 5e-6, duplex: true },
  infiniband: { bandwidth: 3.2e9, latency: 5e-6, duplex: true },
  ethernet: { bandwidth: 1.25e9, latency: 50e-6, duplex: true },
  loopback: { bandwidth: 20e9, latency: 1e-6, duplex: true },
  memory: { bandwidth: 10e9, latency: 1e-6, duplex: true },
};

export const LINK_KINDS = Object.keys(LINK_DEFAULTS) as LinkKind[];

/**
 * What switching a link to `kind` changes: the kind, and its typical bandwidth and latency
 * in place of each value the user had not edited. A value counts as not edited while it is
 * the old kind's typical one (the designer's, or core's shorthand PCIe default for a link a
 * shorthand host expanded into); nothing else remembers who typed what.
 */
export function linkKindPatch(link: Link, kind: LinkKind): Partial<Omit<Link, 'a' | 'b'>> {
  const typical = (field: 'bandwidth' | 'latency') =>
    link[field] === LINK_DEFAULTS[link.kind][field] || (link.kind === 'pcie' && link[field] === DOCUMENT_DEFAULTS.pcie[field]);
  return {
    kind,
    ...(typical('bandwidth') ? { bandwidth: LINK_DEFAULTS[kind].bandwidth } : {}),
    ...(typical('latency') ? { latency: LINK_DEFAULTS[kind].latency } : {}),
  };
}

/** The PCIe link a new GPU gets to its host's first CPU, if the host has one. */
export function gpuLink(doc: WrittenDocument, gpu: ProcessingElement): Link | undefined {
  const cpu = doc.arch.pes.find((p) => p.host === gpu.host && p.kind === 'cpu');
  return cpu ? defaultLink({ ...doc, arch: { ...doc.arch, pes: [...doc.arch.pes, gpu] } }, cpu.id, gpu.id) : undefined;
}

export function defaultLink(doc: WrittenDocument, a: string, b: string): Link {
  const pa = doc.arch.pes.find((p) => p.id === a);
  const pb = doc.arch.pes.find((p) => p.id === b);
  const sameHost = pa && pb && pa.host === pb.host;
  const gpu = pa?.kind === 'gpu' || pb?.kind === 'gpu';
  // Two CPUs of one host: its cores, through the host's memory.
  const kind: LinkKind = sameHost ? (gpu ? 'pcie' : 'memory') : 'ethernet';
  return { a, b, kind, ...LINK_DEFAULTS[kind] };
}

/**
 * A link's label on the canvas: kind, rate and latency. A host of N cores has N(N-1)/2 memory
 * links, alike, so they are labelled only when selected (the inspector shows them anyway).
 */
export function linkLabel(l: Link, selected: boolean): string | undefined {
  if (l.kind === 'memory' && !selected) return undefined;
  return `${l.kind} · ${formatRate(l.bandwidth)} · ${formatSeconds(l.latency)}`;
}

export const PE_SIZE = { width: 150, height: 54 };
const PAD = { x: 14, top: 36, y: 14 };

/** A slot inside a host: CPUs on the first row, GPUs on the second, so links stay visible. */
export function peSlot(col: number, row = 0) {
  return { x: PAD.x + col * (PE_SIZE.width + 48), y: PAD.top + row * (PE_SIZE.height + 56) };
}

/** CPU PEs per row: a host of many cores wraps into rows instead of one row across the canvas. */
export const CPUS_PER_ROW = 4;

/**
 * The next free slot for a PE of `kind` in `host`: CPUs fill rows of CPUS_PER_ROW from the top,
 * GPUs the row under the CPUs' rows.
 */
export function nextSlot(pes: readonly ProcessingElement[], host: string, kind: PeKind) {
  const own = pes.filter((p) => p.host === host && p.position);
  // A slot is taken by any PE it would overlap, not only one exactly on it (a new project's
  // cpu@h0 stands a few pixels off the first slot; a dragged PE anywhere).
  const taken = (s: { x: number; y: number }) =>
    own.some((p) => Math.abs(p.position!.x - s.x) < PE_SIZE.width + 8 && Math.abs(p.position!.y - s.y) < PE_SIZE.height + 8);
  if (kind === 'cpu') {
    for (let i = 0; ; i++) {
      const s = peSlot(i % CPUS_PER_ROW, Math.floor(i / CPUS_PER_ROW));
      if (!taken(s)) return s;
    }
  }
  const cpus = own.filter((p) => p.kind === 'cpu').length;
  const row = Math.max(1, Math.ceil(cpus / CPUS_PER_ROW));
  for (let col = 0; ; col++) {
    const s = peSlot(col, row);
    if (!taken(s)) return s;
  }
}

export function hostSize(doc: WrittenDocument, host: string) {
  const pes = doc.arch.pes.filter((p) => p.host === host);
  let w = 200;
  let h = PAD.top + PE_SIZE.height + PAD.y;
  pes.forEach((p, i) => {
    const pos = p.position ?? peSlot(i);
    w = Math.max(w, pos.x + PE_SIZE.width + PAD.x);
    h = Math.max(h, pos.y + PE_SIZE.height + PAD.y);
  });
  return { width: w, height: h };
}

export function newPe(doc: WrittenDocument, host: string, kind: PeKind, device?: number): ProcessingElement {
  const taken = new Set(doc.arch.pes.map((p) => p.id));
  let id = kind === 'cpu' ? `cpu@${host}` : '';
  if (kind === 'gpu' || taken.has(id)) {
    for (let i = 0; ; i++) {
      const cand = `${kind}${i}@${host}`;
      if (!taken.has(cand)) {
        id = cand;
        if (kind === 'gpu' && device === undefined) device = i;
        break;
      }
    }
  }
  return {
    id,
    host,
    kind,
    memory: kind === 'gpu' ? 4 * 2 ** 30 : 8 * 2 ** 30,
    ...(kind === 'gpu' ? { device: device ?? 0 } : {}),
    position: nextSlot(doc.arch.pes, host, kind),
  };
}

export function newHostId(doc: WrittenDocument): string {
  const taken = new Set(doc.arch.hosts.map((h) => h.id));
  for (let i = 0; ; i++) if (!taken.has(`h${i}`)) return `h${i}`;
}

/**
 * Right of the rightmost host: hosts stand side by side, so the network links between their
 * CPUs (first row) run clear of the GPUs (second row).
 */
export function newHostPosition(doc: WrittenDocument) {
  let x = 0;
  for (const h of doc.arch.hosts) x = Math.max(x, (h.position?.x ?? 0) + hostSize(doc, h.id).width + 120);
  return { x, y: 0 };
}

/**
 * Positions for `pes` (none placed yet) beside the `placed` ones, by nextSlot: each host's CPUs
 * first, then its GPUs, so the GPUs' row is under every CPU whatever order the list has.
 */
export function placePes(placed: readonly ProcessingElement[], pes: readonly ProcessingElement[]): ProcessingElement[] {
  const all = [...placed];
  const at = new Map<ProcessingElement, { x: number; y: number }>();
  for (const kind of ['cpu', 'gpu'] as const)
    for (const p of pes) {
      if (p.kind !== kind) continue;
      const position = nextSlot(all, p.host, kind);
      at.set(p, position);
      all.push({ ...p, position });
    }
  return pes.map((p) => ({ ...p, position: at.get(p)! }));
}

import type { ArchitectureGraph, Host, Link, LinkSpec, ProcessingElement, ProjectDocument } from './types.js';

// The canonical form is what the compiler works on: every PE and link explicit, every option
// set. Users may write hosts and the network in shorthand (docs/document-format.md):
//   {"id": "h0", "cpus": 1, "gpus": 3, "pcie": {"bandwidth": 5e9, "latency": 1e-5}}
//   "network": {"kind": "infiniband", "bandwidth": 2.6e9, "latency": 2e-6}
// A host with `cpus: N` (N >= 2) keeps its `cpuMemory` in the canonical form: the memory its
// CPU PEs share, against which the compiler checks the sum of their buffers.

export const DOCUMENT_DEFAULTS = {
  cpuMemory: 64 * 2 ** 30,
  gpuMemory: 16 * 2 ** 30,
  pcie: { bandwidth: 5e9, latency: 1e-5, duplex: true },
  /** Between two CPU PEs of one host (`cpus: N`, N >= 2): a copy through the host's memory. */
  memory: { bandwidth: 10e9, latency: 1e-6, duplex: true },
  options: { overlap: true, iterations: 100, sync: 'self-timed' },
} as const;

/** A host's only CPU PE (`cpus: 1`, the default), or its CPU `index` of several (`cpus: N`, N >= 2). */
export const cpuId = (host: string, index?: number) => (index === undefined ? `cpu@${host}` : `cpu${index}@${host}`);
export const gpuId = (host: string, index: number) => `gpu${index}@${host}`;

/** Expands shorthands and fills defaults. Expects a document that passed the shape check. */
export function normalize(doc: ProjectDocument): ProjectDocument {
  return normalizeWithOrigins(doc).doc;
}

/**
 * normalize(), plus where each canonical PE and link came from in the document as written
 * (`arch.pes[2]`, `arch.hosts[0].gpuMemory`, `arch.network`), so diagnostics point at what
 * the user wrote. Explicit PEs and links keep their indices: they come first.
 */
export function normalizeWithOrigins(doc: ProjectDocument): { doc: ProjectDocument; pePaths: string[]; linkPaths: string[] } {
  const arch = doc.arch;
  const hosts: Host[] = [];
  const pes: ProcessingElement[] = (arch.pes ?? []).map((pe) => ({ ...pe }));
  const links: Link[] = (arch.links ?? []).map((l) => ({ ...l, duplex: l.duplex ?? true }));
  const pePaths = pes.map((_, i) => `arch.pes[${i}]`);
  const linkPaths = links.map((_, i) => `arch.links[${i}]`);
  (arch.hosts ?? []).forEach((h, i) => {
    const { cpus, gpus, cpuMemory, gpuMemory, pcie, memory, ...host } = h;
    // Without the shorthand, a host's cpuMemory is the canonical form's: what its CPU PEs share.
    if (cpus === undefined && gpus === undefined) {
      hosts.push(cpuMemory === undefined ? host : { ...host, cpuMemory });
      return;
    }
    const nCpu = cpus ?? 1;
    const cpuBytes = cpuMemory ?? DOCUMENT_DEFAULTS.cpuMemory;
    hosts.push(nCpu >= 2 ? { ...host, cpuMemory: cpuBytes } : host);
    // One CPU keeps today's id (`cpu@h0`); several are `cpu0@h0` .. and the first one is the
    // host's contact with its GPUs and the network.
    const cpuIds = nCpu === 1 ? [cpuId(h.id)] : Array.from({ length: nCpu }, (_, k) => cpuId(h.id, k));
    for (const id of cpuIds) {
      pes.push({ id, host: h.id, kind: 'cpu', memory: cpuBytes });
      pePaths.push(`arch.hosts[${i}].${nCpu === 1 ? 'cpuMemory' : 'cpus'}`);
    }
    for (let a = 0; a < cpuIds.length; a++) {
      for (let b = a + 1; b < cpuIds.length; b++) {
        links.push(linkOf(cpuIds[a], cpuIds[b], 'memory', memory ?? DOCUMENT_DEFAULTS.memory));
        linkPaths.push(`arch.hosts[${i}].${memory ? 'memory' : 'cpus'}`);
      }
    }
    for (let g = 0; g < (gpus ?? 0); g++) {
      pes.push({ id: gpuId(h.id, g), host: h.id, kind: 'gpu', memory: gpuMemory ?? DOCUMENT_DEFAULTS.gpuMemory, device: g });
      pePaths.push(`arch.hosts[${i}].gpuMemory`);
      if (nCpu >= 1) {
        links.push(linkOf(cpuIds[0], gpuId(h.id, g), 'pcie', pcie ?? DOCUMENT_DEFAULTS.pcie));
        linkPaths.push(`arch.hosts[${i}].pcie`);
      }
    }
  });
  if (arch.network) {
    const { kind, ...spec } = arch.network;
    // One CPU per host takes part in the network: the first one listed.
    const cpus: string[] = [];
    const seen = new Set<string>();
    for (const pe of pes) {
      if (pe.kind === 'cpu' && !seen.has(pe.host)) {
        seen.add(pe.host);
        cpus.push(pe.id);
      }
    }
    for (let i = 0; i < cpus.length; i++) {
      for (let j = i + 1; j < cpus.length; j++) {
        links.push(linkOf(cpus[i], cpus[j], kind, spec));
        linkPaths.push('arch.network');
      }
    }
  }
  const normalizedArch: ArchitectureGraph = { hosts, pes, links };
  const normalized: ProjectDocument = {
    ...doc,
    // Nodes, edges and the mapping are the document's own objects (nothing downstream writes to
    // them): copying them made a tenth of compile()'s objects and a sixth of analyze()'s time
    // on the bench graph.
    app: { nodes: [...(doc.app?.nodes ?? [])], edges: [...(doc.app?.edges ?? [])] },
    arch: normalizedArch,
    mapping: doc.mapping ?? {},
    options: { ...DOCUMENT_DEFAULTS.options, ...(doc.options ?? {}) },
  };
  delete normalized.arch.network;
  return { doc: normalized, pePaths, linkPaths };
}

function linkOf(a: string, b: string, kind: Link['kind'], spec: LinkSpec): Link {
  return { a, b, kind, bandwidth: spec.bandwidth, latency: spec.latency, duplex: spec.duplex ?? true };
}

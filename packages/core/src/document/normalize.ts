import type { ArchitectureGraph, Host, Link, LinkSpec, ProcessingElement, ProjectDocument } from './types.js';

// The canonical form is what the compiler works on: every PE and link explicit, every option
// set. Users may write hosts and the network in shorthand (docs/document-format.md):
//   {"id": "h0", "cpus": 1, "gpus": 3, "pcie": {"bandwidth": 5e9, "latency": 1e-5}}
//   "network": {"kind": "infiniband", "bandwidth": 2.6e9, "latency": 2e-6}

export const DOCUMENT_DEFAULTS = {
  cpuMemory: 64 * 2 ** 30,
  gpuMemory: 16 * 2 ** 30,
  pcie: { bandwidth: 5e9, latency: 1e-5, duplex: true },
  options: { overlap: true, iterations: 100, sync: 'self-timed' },
} as const;

export const cpuId = (host: string) => `cpu@${host}`;
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
    const { cpus, gpus, cpuMemory, gpuMemory, pcie, ...host } = h;
    hosts.push(host);
    if (cpus === undefined && gpus === undefined) return;
    const nCpu = cpus ?? 1;
    if (nCpu >= 1) {
      pes.push({ id: cpuId(h.id), host: h.id, kind: 'cpu', memory: cpuMemory ?? DOCUMENT_DEFAULTS.cpuMemory });
      pePaths.push(`arch.hosts[${i}].cpuMemory`);
    }
    for (let g = 0; g < (gpus ?? 0); g++) {
      pes.push({ id: gpuId(h.id, g), host: h.id, kind: 'gpu', memory: gpuMemory ?? DOCUMENT_DEFAULTS.gpuMemory, device: g });
      pePaths.push(`arch.hosts[${i}].gpuMemory`);
      if (nCpu >= 1) {
        links.push(linkOf(cpuId(h.id), gpuId(h.id, g), 'pcie', pcie ?? DOCUMENT_DEFAULTS.pcie));
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

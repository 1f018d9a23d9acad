import type { PeReport, ProjectDocument, ProcessingElement } from '@pipeloom/core';
import type { Change } from '../store/changes.js';
import { defaultLink, newHostPosition, nextSlot } from './defaults.js';

/**
 * The changes that fill a host with what its agent reports: the host itself (created when
 * missing, its agent URL set), one PE per report not already present, and a PCIe link from
 * the host's CPU to each new GPU. Existing PEs are kept as the user edited them.
 */
export function changesFromAgent(doc: ProjectDocument, host: string, url: string, pes: PeReport[]): Change[] {
  const out: Change[] = [];
  const existing = doc.arch.hosts.find((h) => h.id === host);
  if (!existing) out.push({ type: 'host/add', host: { id: host, agent: url, position: newHostPosition(doc) } });
  else if (existing.agent !== url) out.push({ type: 'host/update', id: host, patch: { agent: url } });
  const have = new Set(doc.arch.pes.map((p) => p.id));
  const placed: ProcessingElement[] = [...doc.arch.pes];
  let gpuIndex = 0;
  const added: { id: string; kind: 'cpu' | 'gpu' }[] = [];
  for (const r of pes) {
    const index = r.kind === 'gpu' ? (r.adapter ?? gpuIndex) : 0;
    if (r.kind === 'gpu') gpuIndex++;
    const id = r.kind === 'cpu' ? `cpu@${host}` : `gpu${index}@${host}`;
    if (have.has(id)) continue;
    have.add(id);
    const pe: ProcessingElement = { id, host, kind: r.kind, memory: r.memory, ...(r.kind === 'gpu' ? { device: index } : {}), position: nextSlot(placed, host, r.kind) };
    placed.push(pe);
    out.push({ type: 'pe/add', pe });
    added.push({ id, kind: r.kind });
  }
  const cpu = `cpu@${host}`;
  if (have.has(cpu)) {
    // Links are computed against the document with the new PEs in it.
    const withPes: ProjectDocument = {
      ...doc,
      arch: {
        ...doc.arch,
        pes: [...doc.arch.pes, ...out.flatMap((c) => (c.type === 'pe/add' ? [c.pe] : []))],
      },
    };
    for (const a of added) {
      if (a.kind !== 'gpu') continue;
      if (doc.arch.links.some((l) => (l.a === cpu && l.b === a.id) || (l.a === a.id && l.b === cpu))) continue;
      out.push({ type: 'link/add', link: defaultLink(withPes, cpu, a.id) });
    }
  }
  return out;
}

import type { PeReport, WrittenDocument, ProcessingElement } from '@pipeloom/core';
import type { Change } from '../document/changes.js';
import { defaultLink, newHostPosition, nextSlot } from '../document/archDefaults.js';

/** What "Add from agent" does with one host's report: the changes, and why each PE it skips was skipped. */
export interface FromAgent {
  changes: Change[];
  /** `gpu0@h1: already in the architecture (kept as it is)`. */
  skipped: string[];
}

/**
 * The changes that fill a host with what its agent reports: the host itself (created when
 * missing, its agent URL set), one PE per report not already present, under the id and with
 * the memory the agent reports (emulated GPUs sharing one adapter are distinct PEs there, so
 * here too), and a PCIe link from the host's CPU to each new GPU. Existing PEs are kept as
 * the user edited them; each report not added says why.
 */
export function changesFromAgent(doc: WrittenDocument, host: string, url: string, pes: PeReport[]): FromAgent {
  const out: Change[] = [];
  const skipped: string[] = [];
  const existing = doc.arch.hosts.find((h) => h.id === host);
  if (!existing) out.push({ type: 'host/add', host: { id: host, agent: url, position: newHostPosition(doc) } });
  else if (existing.agent !== url) out.push({ type: 'host/update', id: host, patch: { agent: url } });
  const owner = new Map(doc.arch.pes.map((p) => [p.id, p.host]));
  const placed: ProcessingElement[] = [...doc.arch.pes];
  const added: ProcessingElement[] = [];
  for (const r of pes) {
    const id = r.id;
    if (!id.endsWith(`@${host}`)) {
      skipped.push(`${id}: not a PE of host ${host} (an agent's PE ids end in @${host})`);
      continue;
    }
    const other = owner.get(id);
    if (other !== undefined) {
      skipped.push(other === host ? `${id}: already in the architecture (kept as it is)` : `${id}: the id is taken by a PE of host ${other}`);
      continue;
    }
    owner.set(id, host);
    const pe: ProcessingElement = {
      id,
      host,
      kind: r.kind,
      memory: r.memory,
      ...(r.kind === 'gpu' ? { device: r.adapter ?? 0 } : {}),
      position: nextSlot(placed, host, r.kind),
    };
    placed.push(pe);
    added.push(pe);
    out.push({ type: 'pe/add', pe });
  }
  // The host's CPU (the agent's, or the one already drawn) gets a PCIe link to each new GPU.
  const cpu = placed.find((p) => p.host === host && p.kind === 'cpu')?.id;
  if (cpu) {
    const withPes: WrittenDocument = { ...doc, arch: { ...doc.arch, pes: placed } };
    for (const a of added) {
      if (a.kind !== 'gpu') continue;
      if (doc.arch.links.some((l) => (l.a === cpu && l.b === a.id) || (l.a === a.id && l.b === cpu))) continue;
      out.push({ type: 'link/add', link: defaultLink(withPes, cpu, a.id) });
    }
  }
  return { changes: out, skipped };
}

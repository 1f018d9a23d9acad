import { describe, expect, it } from 'vitest';
import { emptyDocument, fromValue } from './documents.js';
import { defaultLink, gpuLink, LINK_DEFAULTS, linkKindPatch, linkLabel, newPe, peSlot } from './archDefaults.js';
import type { Link } from '@pipeloom/core';

describe('architecture defaults', () => {
  it("switching a link's kind brings that kind's typical bandwidth and latency", () => {
    const l: Link = { a: 'cpu@h0', b: 'cpu@h1', kind: 'ethernet', ...LINK_DEFAULTS.ethernet };
    expect(linkKindPatch(l, 'infiniband')).toEqual({
      kind: 'infiniband',
      bandwidth: LINK_DEFAULTS.infiniband.bandwidth,
      latency: LINK_DEFAULTS.infiniband.latency,
    });
  });

  it('a value the user edited is kept, the other follows the kind', () => {
    const l: Link = { a: 'cpu@h0', b: 'cpu@h1', kind: 'ethernet', ...LINK_DEFAULTS.ethernet, bandwidth: 7e9 };
    expect(linkKindPatch(l, 'infiniband')).toEqual({ kind: 'infiniband', latency: LINK_DEFAULTS.infiniband.latency });
  });

  it("a PCIe link expanded from a shorthand host (core's default) counts as typical", () => {
    const l: Link = { a: 'cpu@h0', b: 'gpu0@h0', kind: 'pcie', bandwidth: 5e9, latency: 1e-5, duplex: true };
    expect(linkKindPatch(l, 'nvlink')).toEqual({ kind: 'nvlink', bandwidth: LINK_DEFAULTS.nvlink.bandwidth, latency: LINK_DEFAULTS.nvlink.latency });
  });

  it('a link drawn between two CPUs of one host is a memory link; memory links are labelled only when selected', () => {
    const doc = emptyDocument();
    const d = {
      ...doc,
      arch: {
        ...doc.arch,
        hosts: [{ id: 'h0' }, { id: 'h1' }],
        pes: ['cpu0@h0', 'cpu1@h0', 'cpu@h1'].map((id) => ({ id, host: id.split('@')[1], kind: 'cpu' as const, memory: 1e9 })),
      },
    };
    const inside = defaultLink(d, 'cpu0@h0', 'cpu1@h0');
    expect(inside).toEqual({ a: 'cpu0@h0', b: 'cpu1@h0', kind: 'memory', ...LINK_DEFAULTS.memory });
    expect(defaultLink(d, 'cpu0@h0', 'cpu@h1').kind).toBe('ethernet');
    expect(linkLabel(inside, false)).toBeUndefined();
    expect(linkLabel(inside, true)).toMatch(/^memory · /);
    expect(linkLabel(defaultLink(d, 'cpu0@h0', 'cpu@h1'), false)).toMatch(/^ethernet · /);
  });

  it('a host of eight cores and a GPU is laid out in two rows of four CPUs, the GPU under them', () => {
    const d = fromValue({
      format: 'pipeloom/v2',
      app: { nodes: [], edges: [] },
      arch: { hosts: [{ id: 'h0', cpus: 8, gpus: 1 }], pes: [], links: [] },
      mapping: {},
    }).doc!;
    const at = (id: string) => d.arch.pes.find((p) => p.id === id)!.position;
    expect([0, 1, 2, 3].map((k) => at(`cpu${k}@h0`))).toEqual([0, 1, 2, 3].map((c) => peSlot(c, 0)));
    expect([4, 5, 6, 7].map((k) => at(`cpu${k}@h0`))).toEqual([0, 1, 2, 3].map((c) => peSlot(c, 1)));
    expect(at('gpu0@h0')).toEqual(peSlot(0, 2));
    // One CPU and its GPUs keep their rows.
    const one = fromValue({
      format: 'pipeloom/v2',
      app: { nodes: [], edges: [] },
      arch: { hosts: [{ id: 'h0', gpus: 2 }], pes: [], links: [] },
      mapping: {},
    }).doc!;
    expect(one.arch.pes.map((p) => p.position)).toEqual([peSlot(0, 0), peSlot(0, 1), peSlot(1, 1)]);
  });

  it("a new GPU's link is PCIe to its host's CPU; a host without a CPU gets none", () => {
    const doc = emptyDocument();
    const withHost = { ...doc, arch: { ...doc.arch, hosts: [{ id: 'h0' }], pes: [] } };
    const cpu = newPe(withHost, 'h0', 'cpu');
    const d = { ...withHost, arch: { ...withHost.arch, pes: [cpu] } };
    const gpu = newPe(d, 'h0', 'gpu');
    expect(gpuLink(d, gpu)).toMatchObject({ a: 'cpu@h0', b: 'gpu0@h0', kind: 'pcie' });
    expect(gpuLink(withHost, gpu)).toBeUndefined();
  });
});

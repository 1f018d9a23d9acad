import { describe, expect, it } from 'vitest';
import { defaultLink, gpuLink, LINK_DEFAULTS, linkKindPatch, newPe, PE_SIZE } from './archDefaults.js';
import { emptyDocument, withPositions } from './documents.js';
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

  it("a new GPU's link is PCIe to its host's CPU; a host without a CPU gets none", () => {
    const doc = emptyDocument();
    const withHost = { ...doc, arch: { ...doc.arch, hosts: [{ id: 'h0' }], pes: [] } };
    const cpu = newPe(withHost, 'h0', 'cpu');
    const d = { ...withHost, arch: { ...withHost.arch, pes: [cpu] } };
    const gpu = newPe(d, 'h0', 'gpu');
    expect(gpuLink(d, gpu)).toMatchObject({ a: 'cpu@h0', b: 'gpu0@h0', kind: 'pcie' });
    expect(gpuLink(withHost, gpu)).toBeUndefined();
  });

  it('a link drawn between two CPUs of one host is a memory link, between hosts ethernet', () => {
    const doc = emptyDocument();
    const d = {
      ...doc,
      arch: {
        hosts: [{ id: 'h0' }, { id: 'h1' }],
        pes: ['cpu0@h0', 'cpu1@h0', 'cpu0@h1'].map((id) => ({ id, host: id.slice(-2), kind: 'cpu' as const, memory: 1 })),
        links: [],
      },
    };
    expect(defaultLink(d, 'cpu0@h0', 'cpu1@h0')).toEqual({ a: 'cpu0@h0', b: 'cpu1@h0', kind: 'memory', ...LINK_DEFAULTS.memory });
    expect(defaultLink(d, 'cpu1@h0', 'cpu0@h1').kind).toBe('ethernet');
  });

  it("a written document's host of four CPUs without positions stands on a ring, its GPU below them", () => {
    const doc = emptyDocument();
    const cpus = [0, 1, 2, 3].map((i) => ({ id: `cpu${i}@h0`, host: 'h0', kind: 'cpu' as const, memory: 1 }));
    const d = withPositions({
      ...doc,
      arch: { hosts: [{ id: 'h0' }], pes: [...cpus, { id: 'gpu0@h0', host: 'h0', kind: 'gpu', memory: 1, device: 0 }], links: [] },
    });
    const at = d.arch.pes.map((p) => p.position!);
    // Two rows of two: no three in a line, so no link between two cores runs under a third.
    expect(new Set(at.slice(0, 4).map((p) => p.y)).size).toBe(2);
    expect(new Set(at.slice(0, 4).map((p) => p.x)).size).toBe(2);
    expect(at[4].y).toBeGreaterThanOrEqual(Math.max(...at.slice(0, 4).map((p) => p.y)) + PE_SIZE.height);
  });
});

import type { ProjectDocument } from '../document/types.js';

/**
 * A checked join (tests of checkers that derive their expectation from the graph):
 * P -> I1 (nb_loop 100: +1) -> add.a ; P -> I2 (nb_loop `nbLoop2`) -> add.b ; add -> C.
 * One host (I2 on the CPU) or two (I2 and the add on h1's GPU, C on h1's CPU).
 */
export function checkedJoinDocument(opts: {
  width: number;
  height: number;
  nbLoop2: number;
  hosts: 1 | 2;
  iterations: number;
  consume?: Record<string, number | string>;
}): ProjectDocument {
  const size = { width: opts.width, height: opts.height };
  const pcie = { bandwidth: 5e9, latency: 1e-5 };
  return {
    format: 'pipeloom/v2',
    name: 'checked join',
    app: {
      nodes: [
        { id: 'P', kernel: 'matrix.produce', params: size },
        { id: 'I1', kernel: 'matrix.increment', params: { ...size, nb_loop: 100 } },
        { id: 'I2', kernel: 'matrix.increment', params: { ...size, nb_loop: opts.nbLoop2 } },
        { id: 'A', kernel: 'matrix.add', params: size },
        { id: 'C', kernel: 'matrix.consume', params: { ...size, ...opts.consume } },
      ],
      edges: [
        { from: { node: 'P', port: 'out' }, to: { node: 'I1', port: 'in' } },
        { from: { node: 'P', port: 'out' }, to: { node: 'I2', port: 'in' } },
        { from: { node: 'I1', port: 'out' }, to: { node: 'A', port: 'a' } },
        { from: { node: 'I2', port: 'out' }, to: { node: 'A', port: 'b' } },
        { from: { node: 'A', port: 'out' }, to: { node: 'C', port: 'in' } },
      ],
    },
    arch:
      opts.hosts === 1
        ? { hosts: [{ id: 'h0', cpus: 1, gpus: 1, pcie }], pes: [], links: [] }
        : {
            hosts: [
              { id: 'h0', cpus: 1, gpus: 1, pcie },
              { id: 'h1', cpus: 1, gpus: 1, pcie },
            ],
            pes: [],
            links: [],
            network: { kind: 'infiniband', bandwidth: 2.6e9, latency: 2e-6 },
          },
    mapping:
      opts.hosts === 1
        ? { P: 'cpu@h0', I1: 'gpu0@h0', I2: 'cpu@h0', A: 'gpu0@h0', C: 'cpu@h0' }
        : { P: 'cpu@h0', I1: 'gpu0@h0', I2: 'gpu0@h1', A: 'gpu0@h1', C: 'cpu@h1' },
    options: { overlap: true, iterations: opts.iterations },
  } as ProjectDocument;
}

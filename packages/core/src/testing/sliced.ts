import type { ProjectDocument } from '../document/types.js';

/**
 * A sliced pipeline of 50 nodes on one core, without overlap (memory sharing's test and bench
 * case): `frame` (rate out `slices`) split into slices, `48 / slices` stages of one firing per
 * slice (matrix.increment on its 2 rows, stage by stage), joined back into `check`. The slices
 * read the frame in place and the last stage writes straight into the joined input (views), so
 * the frame and that input are slice-count-sized, everything else a slice.
 */
export function slicedPipeline(slices: number): ProjectDocument {
  const stages = 48 / slices;
  const nodes: ProjectDocument['app']['nodes'] = [{ id: 'frame', kernel: 'matrix.produce', params: { width: 4, height: 2 * slices }, rates: { out: slices } }];
  const edges: ProjectDocument['app']['edges'] = [];
  for (let k = 0; k < stages; k++) {
    for (let j = 0; j < slices; j++) {
      const id = `s${k}#${j}`;
      nodes.push({ id, kernel: 'matrix.increment', params: { width: 4, height: 2 }, firing: { node: `s${k}`, index: j, of: slices } });
      if (k === 0) edges.push({ from: { node: 'frame', port: 'out' }, to: { node: id, port: 'in' }, fromTokens: { first: j, count: 1, of: slices } });
      else edges.push({ from: { node: `s${k - 1}#${j}`, port: 'out' }, to: { node: id, port: 'in' } });
    }
  }
  nodes.push({ id: 'check', kernel: 'matrix.consume', params: { width: 4, height: 2 * slices, increments: String(stages) }, rates: { in: slices } });
  for (let j = 0; j < slices; j++)
    edges.push({ from: { node: `s${stages - 1}#${j}`, port: 'out' }, to: { node: 'check', port: 'in' }, toTokens: { first: j, count: 1, of: slices } });
  const arch: ProjectDocument['arch'] = { hosts: [{ id: 'h0', cpus: 1, gpus: 0 }], pes: [], links: [] };
  return {
    format: 'pipeloom/v2',
    name: `sliced pipeline ${slices} x ${stages}`,
    app: { nodes, edges },
    arch,
    mapping: Object.fromEntries(nodes.map((n) => [n.id, 'cpu@h0'])),
    options: { overlap: false, iterations: 4 },
  };
}

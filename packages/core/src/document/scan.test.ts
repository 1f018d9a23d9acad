import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { formatDiagnostic } from '../diagnostics.js';
import { scanModel } from '../scan/model.js';
import { NETWORKS } from '../scan/networks.js';
import { operatorApplications, SCAN_OUTPUTS, SCAN_STRATEGIES, type OperatorMode } from '../scan/plan.js';
import { registerScanTestKernels, scanDocument } from '../testing/scan.js';
import { lowerDocument } from './lower.js';
import type { ProjectDocument } from './types.js';
import { analyze } from './validate.js';

registerScanTestKernels();

type Val = { lo: number; hi: number } | 'id';

/** Runs a lowered scan document on ranges: every application checks its operands are adjacent, in order. */
function evaluate(doc: ProjectDocument): { values: Map<string, Record<string, Val[]>>; fired: Map<string, number> } {
  const values = new Map<string, Record<string, Val[]>>();
  const fired = new Map<string, number>();
  const nodes = doc.app.nodes;
  const join = (id: string, a: Val, b: Val): Val => {
    if (a === 'id') return b;
    if (b === 'id') return a;
    if (a.hi + 1 !== b.lo) throw new Error(`${id}: [${a.lo}, ${a.hi}] (+) [${b.lo}, ${b.hi}] is not adjacent`);
    fired.set(id, (fired.get(id) ?? 0) + 1);
    return { lo: a.lo, hi: b.hi };
  };
  const input = (id: string, port: string): Val[] | undefined => {
    const parts = doc.app.edges.filter((e) => e.to.node === id && e.to.port === port);
    const out: Val[] = [];
    for (const e of parts) {
      const from = values.get(e.from.node)?.[e.from.port];
      if (!from) return undefined;
      const ft = e.fromTokens ?? { first: 0, count: from.length, of: from.length };
      const tt = e.toTokens ?? { first: 0, count: ft.count, of: ft.count };
      expect(ft.of).toBe(from.length);
      for (let k = 0; k < ft.count; k++) out[tt.first + k] = from[ft.first + k];
    }
    return out;
  };
  for (let round = 0; values.size < nodes.length && round < nodes.length + 1; round++) {
    for (const n of nodes) {
      if (values.has(n.id)) continue;
      const p = n.params ?? {};
      if (n.kernel === 'test.elements') {
        values.set(n.id, { out: Array.from({ length: Number(p.n) }, (_, i) => ({ lo: i, hi: i })) });
        continue;
      }
      if (n.kernel === 'scan.barrier') {
        const v = input(n.id, 'in');
        if (v) values.set(n.id, { out: v });
        continue;
      }
      if (n.kernel === 'test.sink') {
        const v = input(n.id, 'in');
        if (v) values.set(n.id, { in: v });
        continue;
      }
      const mode = p.mode as OperatorMode;
      const m = Number(p.count);
      if (mode === 'apply') {
        const a = input(n.id, 'a');
        const b = input(n.id, 'b');
        if (a && b) values.set(n.id, { out: [join(n.id, a[0], b[0])] });
      } else if (mode === 'propagate') {
        const prefix = input(n.id, 'prefix');
        const block = input(n.id, 'block');
        if (prefix && block) values.set(n.id, { out: block.map((x) => join(n.id, prefix[0], x)) });
      } else {
        const xs = input(n.id, 'in');
        if (!xs) continue;
        expect(xs.length).toBe(m);
        if (mode === 'reduce') values.set(n.id, { total: [xs.reduce((acc: Val, x) => join(n.id, acc, x), 'id')] });
        else if (mode === 'scan') {
          const out: Val[] = [];
          xs.forEach((x, j) => out.push(j ? join(n.id, out[j - 1], x) : x));
          values.set(n.id, { out, total: [out[m - 1]] });
        } else {
          const out: Val[] = ['id'];
          for (let j = 1; j < m; j++) out.push(join(n.id, out[j - 1], xs[j - 1]));
          values.set(n.id, { out, total: [join(n.id, out[m - 1], xs[m - 1])] });
        }
      }
    }
  }
  return { values, fired };
}

function lowered(N: number, p: number, params: Record<string, string>) {
  const { lowered: low, diagnostics } = lowerDocument(scanDocument(N, p, params));
  if (!low) throw new Error(diagnostics.map(formatDiagnostic).join('\n'));
  return low;
}

/** What the model counts, read off the expanded document: nodes, applications per worker, messages, the longest chain. */
function dagCounts(doc: ProjectDocument, pes: string[]) {
  const own = doc.app.nodes.filter((n) => n.id.startsWith('scan1/'));
  const apps = new Map(own.map((n) => [n.id, operatorApplications(n.params!.mode as OperatorMode, Number(n.params!.count))]));
  const worker = (id: string) => pes.indexOf(doc.mapping[id]);
  const perWorker = new Array(pes.length).fill(0);
  for (const n of own) perWorker[worker(n.id)] += apps.get(n.id)!;
  const inner = doc.app.edges.filter((e) => apps.has(e.from.node) && apps.has(e.to.node));
  const messages = new Set(inner.filter((e) => worker(e.from.node) !== worker(e.to.node)).map((e) => `${e.from.node}:${e.from.port}:${worker(e.to.node)}`))
    .size;
  const end = new Map<string, number>();
  const finish = (id: string): number => {
    const known = end.get(id);
    if (known !== undefined) return known;
    const start = Math.max(0, ...inner.filter((e) => e.to.node === id).map((e) => finish(e.from.node)));
    end.set(id, start + apps.get(id)!);
    return end.get(id)!;
  };
  const depth = Math.max(0, ...own.map((n) => finish(n.id)));
  return { nodes: own.length, work: [...apps.values()].reduce((a, b) => a + b, 0), perWorker, messages, depth };
}

describe('scan expansion', () => {
  it('every network, strategy and output gives exactly [0, i] (exclusive: the identity, then [0, i - 1]) and total [0, N - 1], on awkward blocks', () => {
    for (const network of NETWORKS)
      for (const strategy of SCAN_STRATEGIES)
        for (const output of SCAN_OUTPUTS)
          for (const [N, p] of [
            [1, 1],
            [2, 2],
            [5, 3],
            [7, 7],
            [10, 4],
            [13, 5],
            [17, 6],
            [9, 8],
          ]) {
            const low = lowered(N, p, { network, strategy, output });
            const { values, fired } = evaluate(low.doc);
            const got = values.get('sink')?.in;
            const want: Val[] = Array.from({ length: N }, (_, i) => (output === 'inclusive' ? { lo: 0, hi: i } : i === 0 ? 'id' : { lo: 0, hi: i - 1 }));
            expect(got, `${network} ${strategy} ${output} N=${N} p=${p}`).toEqual(want);
            expect(values.get('tot')?.in).toEqual([{ lo: 0, hi: N - 1 }]);
            // Each node fires as many applications as its mode and count say (the model's unit).
            for (const n of low.doc.app.nodes.filter((x) => x.id.startsWith('scan1/')))
              expect(fired.get(n.id) ?? 0, n.id).toBe(operatorApplications(n.params!.mode as OperatorMode, Number(n.params!.count)));
          }
  });

  it('the model equals the expanded DAG (nodes, work per worker, messages, dataflow depth) for N <= 256, p <= 64', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 256 }),
        fc.integer({ min: 1, max: 64 }),
        fc.constantFrom(...NETWORKS),
        fc.constantFrom(...SCAN_STRATEGIES),
        fc.constantFrom(...SCAN_OUTPUTS),
        (N, q, network, strategy, output) => {
          const p = Math.min(N, q);
          const low = lowered(N, p, { network, strategy, output });
          const pes = Array.from({ length: p }, (_, i) => `cpu@h${i}`);
          const dag = dagCounts(low.doc, pes);
          const model = scanModel(N, p, network, strategy, output);
          expect(dag).toEqual({
            nodes: model.nodes,
            work: model.work,
            perWorker: model.workers.map((w) => w.local.applications + w.network.applications + w.prop.applications),
            messages: model.messages,
            depth: model.span.depth,
          });
        },
      ),
      { numRuns: 150, seed: 24 },
    );
  });

  it("ids are stable and each node sits on its worker's PE; diagnostics name the scan node as written", () => {
    const low = lowered(64, 8, { network: 'kogge-stone' });
    const ids = low.doc.app.nodes.map((n) => n.id);
    expect(ids).toContain('scan1/local.w3');
    expect(ids).toContain('scan1/ks.r2.w5');
    expect(ids).toContain('scan1/prop.w3');
    expect(low.doc.mapping['scan1/ks.r2.w5']).toBe('cpu@h5');
    expect(low.doc.mapping['scan1/local.w3']).toBe('cpu@h3');
    const at = low.doc.app.nodes.findIndex((n) => n.id === 'scan1/prop.w3');
    expect(low.nodePaths[at]).toBe('app.nodes[1]');
  });

  it("a scan over 4 workers on two hosts validates and compiles, its out gathered on the consumer's PE", () => {
    for (const network of NETWORKS) {
      const doc = scanDocument(32, 4, { network }, { hosts: 2, pes: ['cpu@h0', 'gpu0@h0', 'cpu@h1', 'gpu0@h1'] });
      doc.arch.hosts = doc.arch.hosts.map((h) => ({ ...h, gpus: 1 }));
      const { model, diagnostics } = analyze(doc);
      expect(diagnostics.filter((d) => d.severity === 'error').map(formatDiagnostic)).toEqual([]);
      expect(model).toBeDefined();
      const result = compile(doc);
      expect(result.ok, result.diagnostics.map(formatDiagnostic).join('\n')).toBe(true);
    }
  });
});

describe('scan bad input', () => {
  const problems = (doc: unknown) => analyze(doc).diagnostics.map((d) => ({ path: d.path, severity: d.severity, text: formatDiagnostic(d) }));
  const first = (doc: unknown) => problems(doc)[0];

  it('an unknown network suggests the nearest', () => {
    const d = first(scanDocument(8, 2, { network: 'kogge-stome' }));
    expect(d.path).toBe('app.nodes[1].params.network');
    expect(d.text).toMatch(/scan node "scan1": unknown network "kogge-stome".*did you mean "kogge-stone"/);
  });

  it('hillis-steele is Kogge-Stone', () => {
    const low = lowered(16, 4, { network: 'hillis-steele' });
    expect(low.doc.app.nodes.some((n) => n.id.startsWith('scan1/ks.'))).toBe(true);
  });

  it('an unregistered operator, one that is not binary, one typed unlike in', () => {
    expect(first(scanDocument(8, 2, { operator: 'test.rang' })).text).toMatch(/operator "test.rang" is not a registered kernel.*nearest: test.range/);
    expect(first(scanDocument(8, 2, { operator: 'generic.work' })).text).toMatch(/generic.work is not a binary operator/);
    const d = first(scanDocument(8, 2, { operator: 'test.range', w: 3 } as never));
    expect(d.path).toBe('app.edges[0]');
    expect(d.text).toMatch(/src.out is scan-element<u32>\[8x2\], but operator test.range with these params scans scan-element<u32>\[8x5\]/);
  });

  it('a non-associative operator only on the serial network; exclusive needs an identity', () => {
    const d = first(scanDocument(8, 2, { operator: 'test.noassoc', network: 'sklansky' }));
    expect(d.path).toBe('app.nodes[1].params.network');
    expect(d.text).toMatch(/not associative.*"network": "serial"/);
    expect(problems(scanDocument(8, 2, { operator: 'test.noassoc', network: 'serial' })).filter((x) => x.severity === 'error')).toEqual([]);
    expect(first(scanDocument(8, 2, { operator: 'test.noassoc', network: 'serial', output: 'exclusive' })).text).toMatch(
      /exclusive scan starts with the identity, and operator test.noassoc has none/,
    );
  });

  it('more workers than elements, an empty PE list, a PE listed twice (a warning)', () => {
    const many = first(scanDocument(5, 8, {}));
    expect(many.path).toBe('mapping.scan1');
    expect(many.text).toMatch(/8 workers for 5 elements/);
    // (The shape check refuses an empty list before lowering.)
    expect(first(scanDocument(5, 1, {}, { pes: [] })).text).toMatch(/^mapping.scan1: is an empty list of PEs/);
    const twice = problems(scanDocument(8, 2, {}, { pes: ['cpu@h0', 'cpu@h0'] }));
    expect(twice.filter((x) => x.severity === 'error')).toEqual([]);
    expect(twice[0]).toMatchObject({ path: 'mapping.scan1[1]', severity: 'warning' });
    expect(twice[0].text).toMatch(/listed twice \(workers 0 and 1\)/);
  });

  it("rounds: a barrier per level relays the operands; answers unchanged, the DAG's depth is the model's rounds span", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(...NETWORKS),
        fc.constantFrom(...SCAN_STRATEGIES),
        fc.constantFrom(...SCAN_OUTPUTS),
        (N, q, network, strategy, output) => {
          const p = Math.min(N, q);
          const low = lowered(N, p, { network, strategy, output, execution: 'rounds' });
          const { values } = evaluate(low.doc);
          const want: Val[] = Array.from({ length: N }, (_, i) => (output === 'inclusive' ? { lo: 0, hi: i } : i === 0 ? 'id' : { lo: 0, hi: i - 1 }));
          expect(values.get('sink')?.in).toEqual(want);
          const nodes = low.doc.app.nodes.filter((n) => n.id.startsWith('scan1/'));
          const barriers = nodes.filter((n) => n.kernel === 'scan.barrier');
          const levels = new Set(nodes.filter((n) => n.params?.mode === 'apply').map((n) => n.id.split('.')[1]));
          expect(barriers.map((b) => b.id.split('/')[1]).sort()).toEqual([...levels].map((l) => `barrier.${l}`).sort());
          // Every network node reads its operands from its level's barrier only; barriers sit on worker 0's PE.
          for (const n of nodes.filter((x) => x.params?.mode === 'apply')) {
            const level = n.id.split('.')[1];
            for (const e of low.doc.app.edges.filter((x) => x.to.node === n.id && (x.to.port === 'a' || x.to.port === 'b')))
              expect(e.from.node).toBe(`scan1/barrier.${level}`);
          }
          for (const b of barriers) expect(low.doc.mapping[b.id]).toBe('cpu@h0');
          const apps = new Map(
            nodes.map((n) => [n.id, n.kernel === 'scan.barrier' ? 0 : operatorApplications(n.params!.mode as OperatorMode, Number(n.params!.count))]),
          );
          const inner = low.doc.app.edges.filter((e) => apps.has(e.from.node) && apps.has(e.to.node));
          const end = new Map<string, number>();
          const finish = (id: string): number => {
            if (!end.has(id)) end.set(id, Math.max(0, ...inner.filter((e) => e.to.node === id).map((e) => finish(e.from.node))) + apps.get(id)!);
            return end.get(id)!;
          };
          const depth = Math.max(0, ...nodes.map((n) => finish(n.id)));
          const model = scanModel(N, p, network, strategy, output, 'rounds');
          expect(depth).toBe(model.span.depth);
          expect([...apps.values()].reduce((a, b) => a + b, 0)).toBe(model.work);
        },
      ),
      { numRuns: 120, seed: 7 },
    );
  });

  it('an unconnected context input is named', () => {
    const d = first(scanDocument(8, 2, { context: true } as never));
    expect(d.path).toBe('app.nodes[1]');
    expect(d.text).toMatch(/context input "frames" of operator test.range is not connected/);
  });
});

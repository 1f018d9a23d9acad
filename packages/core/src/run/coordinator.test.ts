import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compile } from '../compile/compile.js';
import { programHosts } from '../compile/decode.js';
import { layeredDocument } from '../testing/generate.js';
import { SYNC_MODES } from './contract.js';
import { deployMessages, deployTexts, type DeploySettings } from './coordinator.js';

// The deploys themselves, as agents receive them (deploy-check.test.ts runs them through a real
// Coordinator and the agents' check).

const dir = new URL('../../../../examples/', import.meta.url);
const examples = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ name: f, doc: JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as unknown }));

describe('deploy messages', () => {
  it('each host\'s text is JSON.stringify of its message, byte for byte, with the shared parts serialised once', () => {
    const docs = [...examples, { name: 'layered 300 on 6 hosts', doc: layeredDocument(3, { nodes: 300, hosts: 6, gpus: 2 }) }];
    let checked = 0;
    for (const { doc } of docs) {
      for (const overlap of [true, false]) {
        // Examples needing kernels from a package (--kernels) do not compile here.
        const r = compile(doc, { overlap });
        if (!r.ok) continue;
        const hosts = programHosts(r.ig).map((id) => ({ id, url: `ws://${id}` }));
        for (const sync of SYNC_MODES) {
          for (const extra of [{}, { linkRate: 1e9, emulateLinks: true, emulateDevices: { x: 1e-3 } }]) {
            const settings: DeploySettings = { runId: 'r', secret: 's', hosts, iterations: 7, cycles: 12, sync, ...extra };
            const messages = deployMessages(r.ig, settings);
            const texts = deployTexts(messages);
            expect([...texts.keys()]).toEqual(hosts.map((h) => h.id));
            for (const [host, m] of messages) expect(texts.get(host)).toBe(JSON.stringify(m));
            checked++;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('a host gets its own PEs\' programs and, self-timed, their plan entries and every counter', () => {
    const r = compile(layeredDocument(5, { nodes: 200, hosts: 4, gpus: 1 }), { overlap: true });
    if (!r.ok) throw new Error('does not compile');
    const hosts = programHosts(r.ig).map((id) => ({ id, url: `ws://${id}` }));
    const messages = deployMessages(r.ig, { runId: 'r', secret: 's', hosts, iterations: 3, cycles: 9, sync: 'self-timed' });
    const counters = messages.get(hosts[0].id)!.plan!.counters;
    for (const { id } of hosts) {
      const m = messages.get(id)!;
      const pes = r.ig.programs.pes.filter((p) => p.host === id).map((p) => p.pe);
      expect(m.programs.map((p) => p.pe)).toEqual(pes);
      expect(Object.keys(m.plan!.actions)).toEqual(pes);
      expect(m.plan!.counters).toBe(counters);
    }
    expect(deployMessages(r.ig, { runId: 'r', secret: 's', hosts, iterations: 3, cycles: 9, sync: 'barrier' }).get(hosts[0].id)!.plan).toBeUndefined();
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { piic, pipeloomInProcess as pipeloom } from '../testing/fixtures.js';

// Names a user types that are also keys of every JavaScript object (Object.prototype's): the
// CLI must take them as plain words, never look them up through the prototype.

const PROTOTYPE_KEYS = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];
const stackTrace = /TypeError|\n\s+at /;

describe('names that are keys of Object.prototype', () => {
  it('an unknown command, even one named like an object key, prints the usage and exits 2', async () => {
    for (const name of [...PROTOTYPE_KEYS, 'nope']) {
      const r = await pipeloom(name);
      expect(r.status, `pipeloom ${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^pipeloom: unknown command "${name}"\n\nusage: pipeloom <command> \\[options\\]`));
      expect(r.stderr).not.toMatch(stackTrace);
    }
  });

  it('an option or a --format named like an object key is refused with its message, not a stack trace', async () => {
    for (const name of PROTOTYPE_KEYS) {
      const flag = await pipeloom('compile', 'examples/piic.json', `--${name}`);
      expect(flag.status).toBe(1);
      expect(flag.stderr).toContain(`pipeloom compile: Unknown option '--${name}'`);
      expect(flag.stderr).not.toMatch(stackTrace);
      const format = await pipeloom('predict', 'examples/piic.json', '--format', name);
      expect(format.status).toBe(1);
      expect(format.stderr).toContain(`pipeloom predict: --format must be one of text, json, not "${name}"`);
    }
  });

  it('pipeloom run on hosts named "__proto__" and "constructor": each gets its local agent and its GPU, the summary names both', async () => {
    const doc = piic({ iterations: 3 });
    const rename: Record<string, string> = { h0: '__proto__', h1: 'constructor' };
    const text = JSON.stringify(doc).replace(/"h([01])"|@h([01])\b/g, (m, a, b) => (a ? `"${rename[`h${a}`]}"` : `@${rename[`h${b}`]}`));
    const file = join(mkdtempSync(join(tmpdir(), 'pipeloom-names-')), 'piic.json');
    writeFileSync(file, text);
    const r = await pipeloom('run', file, '--format', 'json');
    // Before: the local agents got `--emulate-gpus NaN` / `[object Object]` and never started.
    expect(r.status, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { barrierPerCycle: Record<string, number>; adapters: Record<string, string>; threads: { host: string }[] };
    expect(Object.keys(summary.barrierPerCycle).sort()).toEqual(['__proto__', 'constructor']);
    expect(Object.keys(summary.adapters).sort()).toEqual(['gpu0@__proto__', 'gpu0@constructor']);
    expect(new Set(summary.threads.map((t) => t.host))).toEqual(new Set(['__proto__', 'constructor']));
  });
});

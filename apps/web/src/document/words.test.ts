import { describe, expect, it } from 'vitest';
import { validate, type ProjectDocument } from '@pipeloom/core';
import { emptyDocument } from './documents.js';
import { deployInWords, inWords } from './words.js';

const doc = (): ProjectDocument => {
  const d = emptyDocument();
  return {
    ...d,
    app: {
      nodes: [
        { id: 'produce', kernel: 'matrix.produce', params: { width: 64, height: 64 } },
        { id: 'consume', kernel: 'matrix.consume', params: { width: 64, height: 32 } },
      ],
      edges: [{ from: { node: 'produce', port: 'out' }, to: { node: 'consume', port: 'in' } }],
    },
    mapping: { consume: 'gpu9@h0' },
  };
};

describe('diagnostics in the designer words', () => {
  it('an unmapped node is named with its view and the fix is a thing to do in the Mapping view', () => {
    const w = inWords(doc(), { path: 'mapping', message: 'node "produce" is not mapped', hint: 'add "produce": "<PE id>" to mapping' });
    expect(w.text).toBe('node produce (Application) is not mapped to a PE');
    expect(w.hint).toBe('drag produce onto a PE in the Mapping view, or pick its PE on the node or in the inspector');
  });

  it('every diagnostic core gives this document names its element without a JSON path', () => {
    const diags = validate(doc());
    expect(diags.length).toBeGreaterThan(1);
    for (const d of diags) {
      const w = inWords(doc(), d);
      expect(w.text).not.toMatch(/app\.(nodes|edges)\[|arch\.|"<PE id>"/);
      expect(w.hint ?? '').not.toMatch(/app\.(nodes|edges)\[|arch\.(pes|hosts)\b|to mapping$/);
      expect(w.where).not.toBe('');
    }
    const mismatch = diags.find((d) => d.message.startsWith('type mismatch'))!;
    expect(inWords(doc(), mismatch).text).toMatch(/^edge produce\.out → consume\.in \(Application\): type mismatch/);
    const badPe = diags.find((d) => d.path === 'mapping.consume')!;
    expect(inWords(doc(), badPe).text).toBe('node consume (Mapping): PE gpu9@h0 does not exist');
    expect(inWords(doc(), badPe).hint).toBe('pick one of these PEs in the Mapping view: cpu@h0');
  });

  it('a path inside a message becomes the element it names', () => {
    const w = inWords(doc(), { path: 'app.edges[0].to', message: 'input consume.in is already fed by app.edges[0]' });
    expect(w.text).toBe('edge produce.out → consume.in (Application): input consume.in is already fed by edge produce.out → consume.in');
  });

  it("deploy problems name the Run view's URLs field, not the CLI flag", () => {
    const w = deployInWords({
      message: 'no agent serves host h1 (connected agents serve: h0)',
      hint: 'start `pipeloom agent --name h1` on that host and add its URL to --agents',
    });
    expect(w.hint).toBe("start `pipeloom agent --name h1` on that host and add its URL to the Run view's agent URLs field and Connect");
  });
});

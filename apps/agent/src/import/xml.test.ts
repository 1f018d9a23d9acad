import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attr, decodeEntities, localName, parseXml, XmlError, XML_LIMITS, type XmlElement } from './xml.js';

const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function write(e: XmlElement): string {
  const attrs = Object.entries(e.attrs)
    .map(([k, v]) => ` ${k}="${escape(v)}"`)
    .join('');
  if (!e.children.length && !e.text) return `<${e.name}${attrs}/>`;
  return `<${e.name}${attrs}>${escape(e.text)}${e.children.map(write).join('')}</${e.name}>`;
}

/** What a tree says, positions left out. */
function shape(e: XmlElement): unknown {
  return { name: e.name, attrs: e.attrs, text: e.text, children: e.children.map(shape) };
}

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}(:[A-Za-z_][A-Za-z0-9_]{0,6})?$/);
const value = fc.string({ maxLength: 12 }).map((s) => s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\t\n\r\ud800-\udfff]/g, 'x'));
const tree: fc.Arbitrary<XmlElement> = fc.letrec<{ el: XmlElement }>((tie) => ({
  el: fc
    .record({
      name,
      attrs: fc.dictionary(name, value, { maxKeys: 4 }).map((d) => Object.fromEntries(Object.entries(d).filter(([k]) => k !== '__proto__'))),
      children: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant<XmlElement[]>([]), fc.array(tie('el'), { maxLength: 3 })),
      // Text only on leaves: the reader joins an element's text pieces, and between children it would be split.
      text: value,
      line: fc.constant(0),
      column: fc.constant(0),
    })
    .map((e) => (e.children.length ? { ...e, text: '' } : e)),
})).el;

describe('the XML reader', () => {
  it('reads a PREESM-like file: declaration, comments, namespaces, entities, CDATA', () => {
    const root = parseXml(`<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<spirit:design xmlns:spirit="http://www.spiritconsortium.org/XMLSchema/SPIRIT/1.4">
  <spirit:name>a &amp; b &#65;&#x42;</spirit:name>
  <node id='x' expr="N &lt; 2"><![CDATA[<raw & text>]]></node>
</spirit:design>`);
    expect(root.name).toBe('spirit:design');
    expect(localName(root.name)).toBe('design');
    expect(root.children.map((c) => c.name)).toEqual(['spirit:name', 'node']);
    expect(root.children[0].text).toBe('a & b AB');
    expect(attr(root.children[1], 'expr')).toBe('N < 2');
    expect(root.children[1].text).toBe('<raw & text>');
    expect([root.children[1].line, root.children[1].column]).toEqual([5, 3]);
    expect(attr(root, 'spirit')).toBe('http://www.spiritconsortium.org/XMLSchema/SPIRIT/1.4');
  });

  it('reads back what it is given, for any tree', () => {
    fc.assert(
      fc.property(tree, (t) => {
        expect(shape(parseXml(write(t)))).toEqual(shape(t));
      }),
      { numRuns: 300 },
    );
  });

  it('on any input, returns a tree or throws an XmlError with a line and column, nothing else', () => {
    const pieces = fc.constantFrom(
      '<',
      '>',
      '/',
      '</a>',
      '<a>',
      '<a/>',
      '<b x="1">',
      '"',
      "'",
      '=',
      '&',
      '&amp;',
      '&#0;',
      '&#x41;',
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '<?',
      '?>',
      '<!DOCTYPE a>',
      '\n',
      ' ',
      'x',
      'é',
    );
    const soup = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.array(pieces, { maxLength: 30 }).map((p) => p.join('')),
    );
    fc.assert(
      fc.property(soup, (text) => {
        try {
          parseXml(text);
        } catch (e) {
          expect(e).toBeInstanceOf(XmlError);
          const x = e as XmlError;
          expect(x.line).toBeGreaterThanOrEqual(1);
          expect(x.column).toBeGreaterThanOrEqual(1);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('names the line and column of a mistake', () => {
    const mistake = (text: string) => {
      try {
        parseXml(text);
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    };
    expect(mistake('<a>\n  <b>\n</a>')).toBe('line 3, column 1: closing tag </a> does not match <b> (line 2)');
    expect(mistake('<a x="1" x="2"/>')).toBe('line 1, column 10: attribute x is written twice');
    expect(mistake('<a>\n  &nbsp;</a>')).toBe(
      'line 2, column 3: unknown entity "&nbsp;" (only &lt; &gt; &amp; &quot; &apos; and character references are read)',
    );
    expect(mistake('<a>')).toBe('line 1, column 4: the file ends with <a> (line 1) still open');
    expect(mistake('<a/><b/>')).toBe('line 1, column 5: a second root element');
    expect(mistake('<!DOCTYPE a [<!ENTITY x "y">]><a/>')).toMatch(/^line 1, column 1: a DOCTYPE .* is not read/);
    expect(mistake('')).toBe('line 1, column 1: no root element');
  });

  it('bounds depth, elements, attributes and length', () => {
    const limits = { ...XML_LIMITS, maxDepth: 8, maxElements: 20, maxAttributes: 3, maxLength: 1000 };
    expect(() => parseXml('<a>'.repeat(9) + '</a>'.repeat(9), limits)).toThrow(/nested more than 8 deep/);
    expect(() => parseXml(`<a>${'<b/>'.repeat(20)}</a>`, limits)).toThrow(/more than 20 elements/);
    expect(() => parseXml('<a p="1" q="2" r="3" s="4"/>', limits)).toThrow(/more than 3 attributes/);
    expect(() => parseXml(`<a>${'x'.repeat(1000)}</a>`, limits)).toThrow(/more than 1000/);
    // The default depth holds a deep file without recursion (the reader keeps its own stack).
    expect(parseXml('<a>'.repeat(256) + '</a>'.repeat(256)).name).toBe('a');
  });

  it('decodes entities in one pass: each character examined once, the output no longer than the input', () => {
    const fail = (reason: string): never => {
      throw new Error(reason);
    };
    for (const n of [1, 1000, 200_000]) {
      for (const [unit, decoded] of [
        ['&amp;', '&'],
        ['&#x1F600;', '\u{1F600}'],
        ['a&lt;', 'a<'],
      ] as const) {
        const raw = unit.repeat(n);
        const count = { entities: 0, examined: 0 };
        const out = decodeEntities(raw, count, Infinity, fail);
        expect(out).toBe(decoded.repeat(n));
        expect(out.length).toBeLessThanOrEqual(raw.length);
        expect(count.examined).toBe(raw.length);
        expect(count.entities).toBe(n);
      }
    }
    // Entities are counted across the file: the limit stops the decoding at the first one too many.
    expect(() => parseXml(`<a x="&amp;&amp;">&amp;&amp;<b>&amp;</b></a>`, { ...XML_LIMITS, maxEntities: 4 })).toThrow(
      'line 1, column 32: more than 4 entity references',
    );
    expect(parseXml(`<a x="&amp;&amp;">&amp;<b>&amp;</b></a>`, { ...XML_LIMITS, maxEntities: 4 }).attrs.x).toBe('&&');
  });
});

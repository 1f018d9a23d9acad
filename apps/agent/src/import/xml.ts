// A small XML reader for the files `pipeloom import` takes (PREESM's .pi, .slam and .scenario):
// elements, attributes, text, comments, CDATA, processing instructions and the five predefined
// entities plus character references. No DTD is read (a DOCTYPE is refused: its entities could
// expand without bound), nothing is fetched. Every size is bounded, and a mistake is an XmlError
// naming the file's line and column, never a crash.

import { MAX_DOCUMENT_BYTES } from '@pipeloom/core';

export interface XmlElement {
  /** The qualified name as written (`spirit:design`); `localName` drops the prefix. */
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (its character data, children's excluded), entities decoded. */
  text: string;
  line: number;
  column: number;
}

export interface XmlLimits {
  /** Characters of the whole file. */
  maxLength: number;
  /** Elements open at once. */
  maxDepth: number;
  /** Elements in the file. */
  maxElements: number;
  /** Attributes of one element. */
  maxAttributes: number;
  /** Entity and character references in the file (each decodes to at most two characters, never more than it takes). */
  maxEntities: number;
}

export const XML_LIMITS: XmlLimits = { maxLength: MAX_DOCUMENT_BYTES, maxDepth: 256, maxElements: 1_000_000, maxAttributes: 256, maxEntities: 1_000_000 };

export class XmlError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`line ${line}, column ${column}: ${reason}`);
    this.name = 'XmlError';
  }
}

/** The name without its namespace prefix (`spirit:instanceName` -> `instanceName`). */
export function localName(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

/** Children with this local name. */
export function childrenNamed(e: XmlElement, name: string): XmlElement[] {
  return e.children.filter((c) => localName(c.name) === name);
}

/** The first child with this local name. */
export function childNamed(e: XmlElement, name: string): XmlElement | undefined {
  return e.children.find((c) => localName(c.name) === name);
}

/** An attribute by local name (`slam:componentType` found as `componentType`). */
export function attr(e: XmlElement, name: string): string | undefined {
  if (Object.hasOwn(e.attrs, name)) return e.attrs[name];
  for (const [k, v] of Object.entries(e.attrs)) if (localName(k) === name) return v;
  return undefined;
}

const NAME_START = /[A-Za-z_:\u00C0-\uFFFF]/;
const NAME_CHAR = /[A-Za-z0-9_:.\-\u00B7\u00C0-\uFFFF]/;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Parses a document into its root element; throws XmlError. */
export function parseXml(text: string, limits: XmlLimits = XML_LIMITS): XmlElement {
  if (text.length > limits.maxLength) throw new XmlError(1, 1, `the file has ${text.length} characters, more than ${limits.maxLength}`);
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  let lineStart = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let elements = 0;

  const where = (at: number): [number, number] => {
    // Lines are counted as the cursor moves; a position elsewhere (only on a failure, or a start
    // tag's own position) counts the newlines between it and the cursor.
    if (at >= lineStart && at <= i) return [line, at - lineStart + 1];
    const newlines = (a: number, b: number) => {
      let n = 0;
      for (let k = a; k < b; k++) if (text.charCodeAt(k) === 10) n++;
      return n;
    };
    const l = at > i ? line + newlines(i, at) : line - newlines(at, i);
    return [l, at - (text.lastIndexOf('\n', at - 1) + 1) + 1];
  };
  const fail = (reason: string, at = i): never => {
    const [l, c] = where(at);
    throw new XmlError(l, c, reason);
  };
  const advanceTo = (to: number) => {
    for (let k = i; k < to; k++) {
      if (text.charCodeAt(k) === 10) {
        line++;
        lineStart = k + 1;
      }
    }
    i = to;
  };
  const expectAt = (s: string) => {
    if (!text.startsWith(s, i)) fail(`expected "${s}"`);
    advanceTo(i + s.length);
  };
  const skipSpace = () => {
    let k = i;
    while (k < text.length && /\s/.test(text[k])) k++;
    advanceTo(k);
  };
  const readName = (): string => {
    if (i >= text.length || !NAME_START.test(text[i])) fail(i >= text.length ? 'the file ends inside a tag' : `expected a name, found "${text[i]}"`);
    let k = i + 1;
    while (k < text.length && NAME_CHAR.test(text[k])) k++;
    if (k - i > 1024) fail('a name longer than 1024 characters');
    const name = text.slice(i, k);
    advanceTo(k);
    return name;
  };
  const count = { entities: 0, examined: 0 };
  const decode = (raw: string, at: number): string => decodeEntities(raw, count, limits.maxEntities, (reason, offset) => fail(reason, at + offset));
  const until = (end: string, what: string): number => {
    const k = text.indexOf(end, i);
    if (k < 0) fail(`the file ends inside ${what}`);
    return k;
  };

  while (i < text.length) {
    if (text[i] !== '<') {
      const k = text.indexOf('<', i);
      const to = k < 0 ? text.length : k;
      const raw = text.slice(i, to);
      const top = stack[stack.length - 1];
      if (top) top.text += decode(raw, i);
      else if (raw.trim()) fail(root ? 'text after the root element' : 'text before the root element');
      advanceTo(to);
      continue;
    }
    if (text.startsWith('<!--', i)) {
      const k = until('-->', 'a comment');
      advanceTo(k + 3);
      continue;
    }
    if (text.startsWith('<![CDATA[', i)) {
      const top = stack[stack.length - 1];
      if (!top) fail('CDATA outside the root element');
      const k = until(']]>', 'a CDATA section');
      top!.text += text.slice(i + 9, k);
      advanceTo(k + 3);
      continue;
    }
    if (text.startsWith('<?', i)) {
      const k = until('?>', 'a processing instruction');
      advanceTo(k + 2);
      continue;
    }
    if (text.startsWith('<!', i)) fail('a DOCTYPE or other declaration, which is not read (remove it)');
    if (text.startsWith('</', i)) {
      const at = i;
      advanceTo(i + 2);
      const name = readName();
      skipSpace();
      expectAt('>');
      const top = stack.pop();
      if (!top) fail(`closing tag </${name}> with no element open`, at);
      if (top!.name !== name) fail(`closing tag </${name}> does not match <${top!.name}> (line ${top!.line})`, at);
      continue;
    }
    // A start tag.
    const [l, c] = where(i);
    advanceTo(i + 1);
    if (root && !stack.length) fail('a second root element', i - 1);
    const name = readName();
    if (++elements > limits.maxElements) fail(`more than ${limits.maxElements} elements`);
    const e: XmlElement = { name, attrs: {}, children: [], text: '', line: l, column: c };
    let count = 0;
    for (;;) {
      const before = i;
      skipSpace();
      if (i >= text.length) fail(`the file ends inside the tag <${name}>`);
      if (text[i] === '>' || text.startsWith('/>', i)) break;
      if (i === before) fail(`expected a space, ">" or "/>" in the tag <${name}>`);
      const attrAt = i;
      const key = readName();
      skipSpace();
      expectAt('=');
      skipSpace();
      const quote = text[i];
      if (quote !== '"' && quote !== "'") fail(`the value of ${key} must be quoted`);
      const end = text.indexOf(quote, i + 1);
      if (end < 0) fail(`the file ends inside the value of ${key}`);
      const raw = text.slice(i + 1, end);
      if (raw.includes('<')) fail(`"<" inside the value of ${key}`);
      if (Object.hasOwn(e.attrs, key)) fail(`attribute ${key} is written twice`, attrAt);
      if (++count > limits.maxAttributes) fail(`more than ${limits.maxAttributes} attributes in <${name}>`, attrAt);
      e.attrs[key] = decode(raw, i + 1).replace(/[\t\n\r]/g, ' ');
      advanceTo(end + 1);
    }
    const selfClosing = text[i] === '/';
    advanceTo(i + (selfClosing ? 2 : 1));
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(e);
    else root = e;
    if (!selfClosing) {
      if (stack.length >= limits.maxDepth) fail(`elements nested more than ${limits.maxDepth} deep`);
      stack.push(e);
    }
  }
  if (stack.length) {
    const open = stack[stack.length - 1];
    fail(`the file ends with <${open.name}> (line ${open.line}) still open`);
  }
  if (!root) fail('no root element');
  return root!;
}

/**
 * `raw` with its entity and character references decoded, in one pass: each character is
 * examined once (`count.examined` grows by raw.length) and the result is built from slices joined
 * once, so a file of millions of `&amp;` takes time and memory in proportion to its size.
 * `count.entities` goes past `maxEntities` only by failing.
 */
export function decodeEntities(
  raw: string,
  count: { entities: number; examined: number },
  maxEntities: number,
  fail: (reason: string, offset: number) => never,
): string {
  let amp = raw.indexOf('&');
  if (amp < 0) {
    count.examined += raw.length;
    return raw;
  }
  const parts: string[] = [];
  let from = 0;
  while (amp >= 0) {
    if (++count.entities > maxEntities) fail(`more than ${maxEntities} entity references (&...;)`, amp);
    if (amp > from) parts.push(raw.slice(from, amp));
    // A reference is at most 16 characters between "&" and ";".
    let k = amp + 1;
    while (k < raw.length && k - amp <= 16 && raw[k] !== ';' && raw[k] !== '&' && !/\s/.test(raw[k])) k++;
    count.examined += k + 1 - from;
    if (raw[k] !== ';') fail(`"&" must start an entity such as &amp;`, amp);
    const ref = raw.slice(amp + 1, k);
    if (ref.startsWith('#')) {
      const hex = ref[1] === 'x';
      const code = hex ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!(hex ? /^#x[0-9A-Fa-f]+$/ : /^#[0-9]+$/).test(ref) || !(code > 0 && code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff))
        fail(`"&${ref};" is not a character`, amp);
      parts.push(String.fromCodePoint(code));
    } else {
      if (!Object.hasOwn(ENTITIES, ref)) fail(`unknown entity "&${ref};" (only &lt; &gt; &amp; &quot; &apos; and character references are read)`, amp);
      parts.push(ENTITIES[ref]);
    }
    from = k + 1;
    amp = raw.indexOf('&', from);
  }
  count.examined += raw.length - from;
  if (from < raw.length) parts.push(raw.slice(from));
  return parts.join('');
}

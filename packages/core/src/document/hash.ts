// A document's identity for calibrations and traces: what sets its timing, hashed.

/** A value as JSON with object keys sorted: the same params written in another order are the same key. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * The hash of what sets a document's timing (its app, arch and mapping as written, not lowered:
 * `Model.written`; not its name, options or layout): 64 bits as 16 hex digits, two 32-bit multiply-xor lanes over the canonical JSON.
 * Not cryptographic: it tells a calibration's document from an edited one.
 */
export function documentHash(doc: { app?: unknown; arch?: unknown; mapping?: unknown }): string {
  const text = canonical({ app: doc.app, arch: doc.arch, mapping: doc.mapping });
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(16).padStart(8, '0') + (h1 >>> 0).toString(16).padStart(8, '0');
}

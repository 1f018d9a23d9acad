import { normalize } from './normalize.js';
import type { ProjectDocument } from './types.js';

// A document's identity: a hash of its canonical form (normalized, keys sorted), so a
// shorthand and its expansion, or the same keys in another order, hash alike. Traces and
// calibrations carry it to say which document they belong to. Not cryptographic: core has no
// crypto and needs none here.

/** FNV-1a (64-bit) of the normalized document's canonical JSON, as 16 hex digits. */
export function documentHash(doc: ProjectDocument): string {
  return fnv1a64(canonicalJson(normalize(doc)));
}

/** JSON with object keys sorted at every level (undefined members dropped, as JSON.stringify does). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

const PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** FNV-1a, 64-bit, over the UTF-8 bytes of a string, as 16 hex digits. */
export function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(text)) h = ((h ^ BigInt(byte)) * PRIME) & MASK;
  return h.toString(16).padStart(16, '0');
}

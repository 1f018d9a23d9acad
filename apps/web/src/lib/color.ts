import type { WrittenDocument } from '@pipeloom/core';

// Stable colours: a PE keeps its colour as long as it keeps its place in the architecture.
const PE_COLORS = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#ec4899', '#84cc16', '#f97316', '#6366f1'];
const MEMORY_COLORS = ['#dbeafe', '#fde68a', '#bbf7d0', '#fecaca', '#ddd6fe', '#a5f3fc', '#fbcfe8', '#d9f99d', '#fed7aa', '#c7d2fe'];

// Each PE's place, per PE list (the store replaces the list when the architecture changes):
// canvases ask once per node, and a search of a 1,000-PE list per node of a 10,000-node
// graph was 10 million comparisons per render.
const places = new WeakMap<readonly { id: string }[], Map<string, number>>();

export function peColor(doc: WrittenDocument, pe: string | undefined): string | undefined {
  if (!pe) return undefined;
  let place = places.get(doc.arch.pes);
  if (!place) places.set(doc.arch.pes, (place = new Map(doc.arch.pes.map((p, i) => [p.id, i]))));
  const i = place.get(pe);
  return i === undefined ? undefined : PE_COLORS[i % PE_COLORS.length];
}

export const memoryColor = (color: number) => MEMORY_COLORS[color % MEMORY_COLORS.length];

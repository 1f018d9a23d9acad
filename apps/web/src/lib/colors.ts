import type { ProjectDocument } from '@pipeloom/core/document/types';

// Stable colours: a PE keeps its colour as long as it keeps its place in the architecture.
const PE_COLORS = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#ec4899', '#84cc16', '#f97316', '#6366f1'];
const MEMORY_COLORS = ['#dbeafe', '#fde68a', '#bbf7d0', '#fecaca', '#ddd6fe', '#a5f3fc', '#fbcfe8', '#d9f99d', '#fed7aa', '#c7d2fe'];

export function peColor(doc: ProjectDocument, pe: string | undefined): string | undefined {
  if (!pe) return undefined;
  const i = doc.arch.pes.findIndex((p) => p.id === pe);
  return i < 0 ? undefined : PE_COLORS[i % PE_COLORS.length];
}

export const memoryColor = (color: number) => MEMORY_COLORS[color % MEMORY_COLORS.length];

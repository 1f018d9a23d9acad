import type { ImplementationGraph, TraceColumns } from '@pipeloom/core';
import type { Window } from './viewport.js';

// Tracks as registered kinds, Perfetto UI's way: the timeline asks every registered kind for
// its tracks of the data, lays them out lane by lane and lets each paint its own band from the
// time window. A later execution mode adds a kind (a module with `tracks()`) and registers it;
// Timeline.tsx does not change.

/** What one frame paints into. */
export interface Frame {
  /** The canvas's pixels (ImageData as Uint32, little-endian RGBA) and pixels per row. */
  px: Uint32Array;
  stride: number;
  /** The tracks' columns in device pixels: [x0, x0 + width). */
  x0: number;
  width: number;
  dpr: number;
  win: Window;
  /** Text a track wants drawn over its pixels (CSS pixels from the tracks' left edge). */
  labels: { text: string; x0: number; x1: number; y: number }[];
  /** Boxes painted, after merging (the benchmark's count). */
  boxes: number;
}

/** What kinds make their tracks from. */
export interface TrackSource {
  measured: TraceColumns;
  predicted?: TraceColumns;
  /** The implementation graph the trace ran (flows, names); absent before a run. */
  graph?: ImplementationGraph | null;
  /** Kinds with a switch in the key bar that are on. */
  shown: ReadonlySet<string>;
}

export interface Track {
  /** The registered kind that made it. */
  readonly kind: string;
  /** The lane group it sits in; a host-wide track has pe '' (drawn after the host's lanes). */
  readonly host: string;
  readonly pe: string;
  readonly thread: string;
  /** Order inside the group (a lane's measured slices before its predicted plan). */
  readonly order: number;
  /** Gutter text; '' when the group's first track already names the lane. */
  readonly label: string;
  /** CSS pixels. */
  readonly height: number;
  /** The measured store's lane it draws (-1: none): flow arrows end on it. */
  readonly measuredLane: number;
  /** Paints rows [y0, y1) (device pixels); `mid` is its middle in CSS pixels for labels. */
  paint(f: Frame, y0: number, y1: number, mid: number): void;
  /** Tooltip lines for what is at time t (µs, within `slack`), or null. */
  hit(t: number, slack: number): string[] | null;
}

export interface TrackKind {
  readonly id: string;
  /** A switch in the key bar (off by default unless `on`); absent: always drawn. */
  readonly toggle?: { label: string; title: string; swatch: string; on: boolean };
  /** What its tracks depend on beyond the stores' lanes (a counter first sampled in a lane already drawn); cheap, asked each frame. */
  signature?(src: TrackSource): string;
  tracks(src: TrackSource): Track[];
}

const registry: TrackKind[] = [];

/** Registers a kind (a kind with the same id is replaced); tracks are laid out in registration order within a lane. */
export function registerTrackKind(kind: TrackKind): void {
  const at = registry.findIndex((k) => k.id === kind.id);
  if (at >= 0) registry[at] = kind;
  else registry.push(kind);
}

export const trackKinds = (): readonly TrackKind[] => registry;

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
// Main thread first in a PE; a host's own tracks (pe '') after its PEs.
const threadRank = (t: string) => (t === 'main' ? '' : t);
const peRank = (p: string) => (p === '' ? '\uffff' : p);

/** The kinds' signatures for the data: the tracks are rebuilt when it changes. */
export function tracksSignature(src: TrackSource, kinds: readonly TrackKind[] = registry): string {
  let s = '';
  for (const k of kinds) if (k.signature && (!k.toggle || src.shown.has(k.id))) s += `${k.id}:${k.signature(src)};`;
  return s;
}

/** Every kind's tracks for the data, ordered host, PE, thread, then by kind order. */
export function buildTracks(src: TrackSource, kinds: readonly TrackKind[] = registry): Track[] {
  const all: Track[] = [];
  for (const k of kinds) if (!k.toggle || src.shown.has(k.id)) all.push(...k.tracks(src));
  return all.sort((a, b) => cmp(a.host, b.host) || cmp(peRank(a.pe), peRank(b.pe)) || cmp(threadRank(a.thread), threadRank(b.thread)) || a.order - b.order);
}

/** A track's place: top (CSS px, in the scrolled content) and whether it opens a lane group. */
export interface Row {
  track: Track;
  top: number;
  first: boolean;
  /** Index of its lane group (stripes alternate). */
  group: number;
}

/** Padding above and below a lane group, and between its tracks (CSS px). */
export const GROUP_PAD = 2;
export const TRACK_GAP = 1;

export function layoutRows(tracks: readonly Track[]): { rows: Row[]; height: number; groups: { top: number; height: number; host: string }[] } {
  const rows: Row[] = [];
  const groups: { top: number; height: number; host: string }[] = [];
  let y = 0;
  let key = '';
  for (const t of tracks) {
    const k = `${t.host}\u0000${t.pe}\u0000${t.thread}`;
    if (k !== key) {
      if (groups.length) {
        y += GROUP_PAD;
        groups[groups.length - 1].height = y - groups[groups.length - 1].top;
      }
      groups.push({ top: y, height: 0, host: t.host });
      y += GROUP_PAD;
      key = k;
      rows.push({ track: t, top: y, first: true, group: groups.length - 1 });
    } else {
      y += TRACK_GAP;
      rows.push({ track: t, top: y, first: false, group: groups.length - 1 });
    }
    y += t.height;
  }
  if (groups.length) {
    y += GROUP_PAD;
    groups[groups.length - 1].height = y - groups[groups.length - 1].top;
  }
  return { rows, height: y, groups };
}

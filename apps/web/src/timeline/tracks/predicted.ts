import { KIND_COLORS, lanePairs, pixel, rasterLane } from '../raster.js';
import type { Track, TrackKind } from '../track.js';
import { describeEvent } from './describe.js';

// The predictor's plan, a thin faded band under each lane's measured slices: the same time
// axis, so a run is read against its plan cycle by cycle.

const COLORS = KIND_COLORS.map((c) => pixel(c, 0.45));

export const predictedKind: TrackKind = {
  id: 'predicted',
  toggle: { label: 'predicted', title: 'Draw the predicted plan as a thin, faded track under each lane', swatch: KIND_COLORS[0], on: true },
  tracks({ measured, predicted }) {
    if (!predicted) return [];
    return lanePairs(measured, predicted)
      .filter((l) => l.predicted >= 0)
      .map((l): Track => ({
        kind: 'predicted',
        host: l.host,
        pe: l.pe,
        thread: l.thread,
        order: 1,
        label: '',
        height: 7,
        measuredLane: -1,
        paint(f, y0, y1) {
          const stats = { boxes: 0 };
          rasterLane(f.px, f.stride, predicted, l.predicted, f.win, f.x0, f.width, y0, y1, COLORS, null, 0, stats);
          f.boxes += stats.boxes;
        },
        hit(t, slack) {
          const i = predicted.hit(l.predicted, t, slack);
          return i < 0 ? null : describeEvent(predicted, i, 'predicted ');
        },
      }));
  },
};

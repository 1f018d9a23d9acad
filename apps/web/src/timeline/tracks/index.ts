import { registerTrackKind } from '../track.js';
import { slices } from './slices.js';
import { predictedKind } from './predicted.js';
import { inFlightKind } from './inFlight.js';
import { countersKind } from './counters.js';

// The built-in track kinds, in the order a lane stacks them.
registerTrackKind(slices);
registerTrackKind(predictedKind);
registerTrackKind(inFlightKind);
registerTrackKind(countersKind);

export { slices, predictedKind, inFlightKind, countersKind };

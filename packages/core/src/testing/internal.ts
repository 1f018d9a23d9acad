// @pipeloom/core/internal: the parts of core that tests and benches outside core use but the
// agent, the web app and the scripts do not; core's index stays what they use. Like
// '@pipeloom/core/testing' it is not built into the published package (scripts/pack.mjs
// leaves out every export in a testing/ folder); index.test.ts checks both lists.

export { MAX_DELAY } from '../document/schema.js';
export { scanBarriers } from '../scan/plan.js';
export { networkModel } from '../scan/model.js';
export { hostPrograms, lastStartCycle } from '../compile/decode.js';
export { simulate } from '../compile/simulate.js';
export { documentHash } from '../document/hash.js';
export { CALIBRATION_FORMAT } from '../run/calibration.js';
export { deployMessages, STOP_WAIT_MS } from '../run/coordinator.js';
export { taskBagPolicy, simulateBag, type BagTask } from '../run/policy.js';

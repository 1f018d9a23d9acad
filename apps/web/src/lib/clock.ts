// The browser's clock as core's coordinator takes it (core has no clock of its own).
export const browserClock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
  clearTimeout: (h: never) => clearTimeout(h),
};

/** The coordinator's clock, injected (core reads no clock of its own). */
export interface Clock {
  /** Milliseconds since the epoch, sub-millisecond precision where available. */
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: never): void;
}

// Timers are called unbound: a browser's window.setTimeout throws when called as a method of
// another object, so `{ setTimeout, clearTimeout }` works as a clock as written.
export function later(clock: Pick<Clock, 'setTimeout'>, fn: () => void, ms: number): unknown {
  const set = clock.setTimeout;
  return set(fn, ms);
}
export function cancel(clock: Pick<Clock, 'clearTimeout'>, handle: never): void {
  const clear = clock.clearTimeout;
  clear(handle);
}

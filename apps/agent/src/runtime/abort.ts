// Aborting a run from anywhere (a failed check, a lost peer, a stop) must wake every wait of
// the thread at once. Each thread (the agent's main thread, each PE thread) owns one Abort.

export class AbortError extends Error {}

export class Abort {
  reason: string | null = null;
  private readonly waiters = new Set<(e: Error) => void>();

  /** Rejects every guarded wait; later calls keep the first reason. Returns false if already aborted. */
  abort(reason: string): boolean {
    if (this.reason) return false;
    this.reason = reason;
    const e = new AbortError(reason);
    for (const r of this.waiters) r(e);
    this.waiters.clear();
    return true;
  }

  /** `p`, or a rejection once the run aborts (no Promise.race on a long-lived promise: it would leak). */
  guard<T>(p: Promise<T>): Promise<T> {
    if (this.reason) return Promise.reject(new AbortError(this.reason));
    return new Promise<T>((resolve, reject) => {
      this.waiters.add(reject);
      p.then(
        (v) => (this.waiters.delete(reject), resolve(v)),
        (e) => (this.waiters.delete(reject), reject(e)),
      );
    });
  }
}

import type { PeerLink } from '../peer/link.js';

// Cluster-wide barrier without the coordinator: the PEs of a host meet locally, then each
// host sends one token to the root agent (the run's first host), which releases everyone.
// Only sequence numbers travel; no data.

export class ClusterBarrier {
  private local = new Map<number, number>();
  private hostArrivals = new Map<number, number>();
  private releases = new Map<number, () => void>();
  private early = new Set<number>();
  /** Microseconds from the last local arrival to the release, summed. */
  syncMicros = 0;
  count = 0;

  constructor(
    readonly me: string,
    readonly hosts: string[],
    readonly localPes: number,
    readonly peers: Map<string, PeerLink>,
  ) {}

  get root(): string {
    return this.hosts[0];
  }

  arrive(seq: number): Promise<void> {
    const n = (this.local.get(seq) ?? 0) + 1;
    const done = new Promise<void>((resolve) => {
      const waiting = this.releases.get(seq);
      this.releases.set(seq, waiting ? () => (waiting(), resolve()) : resolve);
    });
    if (n < this.localPes) {
      this.local.set(seq, n);
      return done;
    }
    this.local.delete(seq);
    const t0 = performance.now();
    this.count++;
    void done.then(() => (this.syncMicros += (performance.now() - t0) * 1000));
    if (this.me === this.root) this.hostArrived(seq);
    else if (this.early.delete(seq)) this.release(seq);
    else this.peers.get(this.root)?.send({ type: 'barrier', seq });
    return done;
  }

  /** Root: a host (this one or a peer) has all its PEs at the barrier. */
  hostArrived(seq: number): void {
    const n = (this.hostArrivals.get(seq) ?? 0) + 1;
    if (n < this.hosts.length) {
      this.hostArrivals.set(seq, n);
      return;
    }
    this.hostArrivals.delete(seq);
    for (const [host, link] of this.peers) if (this.hosts.includes(host)) link.send({ type: 'release', seq });
    this.release(seq);
  }

  release(seq: number): void {
    const r = this.releases.get(seq);
    if (r) {
      this.releases.delete(seq);
      r();
    } else this.early.add(seq);
  }
}

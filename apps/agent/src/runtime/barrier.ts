import type { PeerLink } from '../peer/link.js';

// Cluster-wide barrier without the coordinator. The PEs of a host meet locally first (the PE
// threads in shared memory, local-barrier.ts), then the hosts run a dissemination barrier
// (Hensgen, Finkel & Manber, 1988): in round r each host sends a token to the host 2^r places
// after it in the run's host order and waits for the token from the host 2^r places before
// it. After ceil(log2 n) rounds every host has heard, directly or through others, from every
// host, so each one lets its PEs go on its own: no root, and one message hop per round. Two
// hosts meet in one hop, where arrival at a root and its release took two; at the peak of
// bench:overlap each hop is up to a couple of milliseconds while the firings load the cores.
// Only sequence numbers travel; no data.

export class ClusterBarrier {
  private local = new Map<number, number>();
  private releases = new Map<number, () => void>();
  /** Tokens received from peers, per barrier: a bit per round (they may come before this host is there). */
  private tokens = new Map<number, number>();
  /** Barriers this host is in, with the round whose token it waits for. */
  private waiting = new Map<number, number>();
  private readonly index: number;
  private readonly rounds: number;
  /** Microseconds from the last local arrival to the release, summed. */
  syncMicros = 0;
  count = 0;

  constructor(
    readonly me: string,
    readonly hosts: string[],
    readonly localPes: number,
    readonly peers: Map<string, PeerLink>,
  ) {
    this.index = hosts.indexOf(me);
    if (this.index < 0) throw new Error(`host ${me} is not among the run's hosts (${hosts.join(', ')})`);
    this.rounds = hosts.length > 1 ? Math.ceil(Math.log2(hosts.length)) : 0;
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
    this.step(seq, 0);
    return done;
  }

  /** A peer's token for round `round` of barrier `seq`. */
  token(seq: number, round: number): void {
    this.tokens.set(seq, (this.tokens.get(seq) ?? 0) | (1 << round));
    if (this.waiting.get(seq) === round) {
      this.waiting.delete(seq);
      this.step(seq, round + 1);
    }
  }

  /** Sends this host's token for each round from `round` on, as far as the tokens received allow; releases after the last. */
  private step(seq: number, round: number): void {
    for (let r = round; r < this.rounds; r++) {
      const to = this.hosts[(this.index + (1 << r)) % this.hosts.length];
      this.peers.get(to)?.send({ type: 'barrier', seq, round: r });
      const got = this.tokens.get(seq) ?? 0;
      if (!(got & (1 << r))) {
        this.waiting.set(seq, r);
        return;
      }
    }
    this.tokens.delete(seq);
    this.release(seq);
  }

  private release(seq: number): void {
    const r = this.releases.get(seq);
    this.releases.delete(seq);
    r?.();
  }
}

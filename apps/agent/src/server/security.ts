import { createHash, timingSafeEqual } from 'node:crypto';

// Token check, Origin allow-list, per-socket limits and the login throttle (the front door's
// log is front-door-log.ts).

/** Constant-time token comparison (hashing first makes the lengths equal). */
export function tokenMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

/**
 * Origin patterns: exact origins or a `*` port wildcard, e.g. `http://localhost:*`.
 * Connections without an Origin header (CLI, other agents) are not browsers and pass.
 */
export const DEFAULT_ORIGINS = ['http://127.0.0.1:*', 'http://localhost:*', 'https://127.0.0.1:*', 'https://localhost:*'];

export function originAllowed(origin: string | undefined, patterns: readonly string[]): boolean {
  if (!origin) return true;
  return patterns.some((p) => {
    if (p === '*') return true;
    if (p.endsWith(':*')) {
      const base = p.slice(0, -2);
      return origin === base || (origin.startsWith(`${base}:`) && /^\d+$/.test(origin.slice(base.length + 1)));
    }
    return origin === p;
  });
}

/** Messages per second on one socket, over a sliding one-second window. */
export class RateLimit {
  private windowStart = 0;
  private count = 0;
  constructor(readonly perSecond: number) {}
  /** False once the socket has sent more than the limit within one second. */
  take(nowMs: number): boolean {
    if (nowMs - this.windowStart >= 1000) {
      this.windowStart = nowMs;
      this.count = 0;
    }
    return ++this.count <= this.perSecond;
  }
}

export interface Limits {
  /** Largest text message in bytes once logged in (deploy plans are the big ones): --max-message. */
  maxMessage: number;
  /** Largest binary frame on a peer link once authenticated (a buffer plus its header). */
  maxFrame: number;
  /** Text messages per second per socket: --max-rate. */
  messagesPerSecond: number;
  /** Largest message of any kind before login: the transports refuse more at the frame header. */
  maxMessageBeforeLogin: number;
  /** Milliseconds from the TCP connect to a completed login (handshake included): --login-timeout. */
  loginTimeoutMs: number;
  /** Connections not yet logged in, in total: --max-pending. */
  maxPending: number;
  /** Connections not yet logged in, per remote address: --max-pending-per-address. */
  maxPendingPerAddress: number;
  /** Failed logins an address may make before it must wait. */
  loginFailuresFree: number;
  /** The first wait after those, in ms; it doubles with each further failure. */
  loginBackoffMs: number;
  /** The longest wait, in ms. */
  loginBackoffMaxMs: number;
  /** Front-door log lines of one kind per log window (the rest are counted, then summed up in one line). */
  logBurst: number;
  logWindowMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxMessage: 16 << 20,
  maxFrame: 1 << 30,
  messagesPerSecond: 2000,
  maxMessageBeforeLogin: 64 << 10,
  loginTimeoutMs: 5000,
  maxPending: 256,
  maxPendingPerAddress: 16,
  loginFailuresFree: 5,
  loginBackoffMs: 1000,
  loginBackoffMaxMs: 60_000,
  logBurst: 10,
  logWindowMs: 10_000,
};

/** Tokens shorter than this are refused at agent start (a generated one has 32 characters). */
export const MIN_TOKEN_LENGTH = 16;

/**
 * Failed logins per remote address: after `loginFailuresFree` of them, the address waits
 * (doubling up to the maximum) before its next token is even compared. A success forgets it.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; until: number }>();
  /** Addresses remembered at most (oldest forgotten first): a spray of addresses costs bounded memory. */
  static readonly MAX_ADDRESSES = 10_000;

  constructor(private readonly limits: Pick<Limits, 'loginFailuresFree' | 'loginBackoffMs' | 'loginBackoffMaxMs'>) {}

  /** Milliseconds `address` must still wait before a login is checked; 0 when it may try now. */
  wait(address: string, nowMs: number): number {
    const f = this.failures.get(address);
    return f ? Math.max(0, f.until - nowMs) : 0;
  }

  failed(address: string, nowMs: number): void {
    const f = this.failures.get(address) ?? { count: 0, until: 0 };
    this.failures.delete(address);
    f.count++;
    const over = f.count - this.limits.loginFailuresFree;
    if (over > 0) f.until = nowMs + Math.min(this.limits.loginBackoffMaxMs, this.limits.loginBackoffMs * 2 ** Math.min(over - 1, 30));
    // Re-inserted: the map's order is the order of last failure, oldest first.
    this.failures.set(address, f);
    if (this.failures.size > LoginThrottle.MAX_ADDRESSES) this.failures.delete(this.failures.keys().next().value!);
  }

  succeeded(address: string): void {
    this.failures.delete(address);
  }
}

/**
 * Connections that have not logged in yet, per remote address and in total. `admit` says
 * whether one more may start; each admitted one is counted until `release`.
 */
export class PendingConnections {
  private readonly byAddress = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: Pick<Limits, 'maxPending' | 'maxPendingPerAddress'>) {}

  /** Counts a new connection from `address`, or returns why it is refused. */
  admit(address: string): { ok: true } | { ok: false; why: 'total' | 'address' } {
    if (this.total >= this.limits.maxPending) return { ok: false, why: 'total' };
    const n = this.byAddress.get(address) ?? 0;
    if (n >= this.limits.maxPendingPerAddress) return { ok: false, why: 'address' };
    this.byAddress.set(address, n + 1);
    this.total++;
    return { ok: true };
  }

  release(address: string): void {
    const n = this.byAddress.get(address);
    if (!n) return;
    if (n === 1) this.byAddress.delete(address);
    else this.byAddress.set(address, n - 1);
    this.total--;
  }

  get count(): number {
    return this.total;
  }
}

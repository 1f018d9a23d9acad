import { createHash, timingSafeEqual } from 'node:crypto';

// Token check, Origin allow-list and per-socket limits: the agent's front door.

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
  /** Largest text message in bytes (deploy plans are the big ones). */
  maxMessage: number;
  /** Largest binary frame on a peer link (a buffer plus its header). */
  maxFrame: number;
  /** Text messages per second per socket. */
  messagesPerSecond: number;
}

export const DEFAULT_LIMITS: Limits = { maxMessage: 16 << 20, maxFrame: 1 << 30, messagesPerSecond: 2000 };

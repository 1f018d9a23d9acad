import { describe, expect, it } from 'vitest';
import { samePe, servedPe } from './pe-alias.js';

describe("a document's PE against an agent's", () => {
  const cores = ['cpu0@h0', 'cpu1@h0', 'gpu0@h0'].map((id) => ({ id }));

  it("cpu@h0 is the agent's first core, cpu0@h0, and only that", () => {
    expect(servedPe(cores, 'cpu@h0')?.id).toBe('cpu0@h0');
    expect(servedPe(cores, 'cpu1@h0')?.id).toBe('cpu1@h0');
    expect(servedPe(cores, 'cpu@h1')).toBeUndefined();
    expect(servedPe(cores, 'cpu2@h0')).toBeUndefined();
    expect(servedPe(cores, 'gpu@h0')).toBeUndefined();
    expect(samePe('cpu@h0', 'cpu0@h0')).toBe(true);
    expect(samePe('cpu0@h0', 'cpu@h0')).toBe(true);
    expect(samePe('cpu@h0', 'cpu1@h0')).toBe(false);
    expect(samePe('cpu@h0', 'cpu0@h00')).toBe(false);
  });

  it('an agent that reports cpu@h0 (before --cpus) still serves documents naming cpu0@h0 or cpu@h0', () => {
    const old = [{ id: 'cpu@h0' }];
    expect(servedPe(old, 'cpu@h0')).toBe(old[0]);
    expect(servedPe(old, 'cpu0@h0')).toBe(old[0]);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluateExpression, MAX_EXPRESSION_DEPTH, parseExpression } from './expr.js';

const value = (text: string, scope: Record<string, number> = {}) => {
  const r = evaluateExpression(text, scope);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};
const problem = (text: string, scope: Record<string, number> = {}) => {
  const r = evaluateExpression(text, scope);
  return r.ok ? `value ${r.value}` : r.error.message;
};

describe('expressions', () => {
  it('reads numbers with decimals and exponents', () => {
    expect(value('42')).toBe(42);
    expect(value('1.5')).toBe(1.5);
    expect(value('.25')).toBe(0.25);
    expect(value('2.')).toBe(2);
    expect(value('1e3')).toBe(1000);
    expect(value('2.5E-2')).toBe(0.025);
  });

  it('applies precedence, left associativity, unary minus and parentheses', () => {
    expect(value('2 + 3 * 4')).toBe(14);
    expect(value('(2 + 3) * 4')).toBe(20);
    expect(value('10 - 4 - 3')).toBe(3);
    expect(value('64 / 4 / 2')).toBe(8);
    expect(value('17 % 5')).toBe(2);
    expect(value('-3 * -2')).toBe(6);
    expect(value('--3')).toBe(3);
    expect(value('2 * -(1 + 2)')).toBe(-6);
    expect(value(' 1+2 ')).toBe(3);
  });

  it('reads parameters and min/max with any number of arguments', () => {
    const scope = { W: 2048, H: 1024, N: 50, min: 7 };
    expect(value('W / 8', scope)).toBe(256);
    expect(value('2 * N', scope)).toBe(100);
    expect(value('min(W, H)', scope)).toBe(1024);
    expect(value('max(W, H, 4096)', scope)).toBe(4096);
    expect(value('max(1)', scope)).toBe(1);
    expect(value('min(W, max(H, 3000)) - 1', scope)).toBe(2047);
    // `min` not followed by "(" is a parameter name.
    expect(value('min + 1', scope)).toBe(8);
    expect(value('x_1 * 2', { x_1: 4 })).toBe(8);
  });

  it('reports syntax errors with the 1-based column', () => {
    expect(problem('2 * (N', { N: 1 })).toBe('expression "2 * (N": expected ")" at column 7');
    expect(problem('2 * ')).toBe('expression "2 * ": expected a number, a parameter name or "(" at column 5');
    expect(problem('')).toBe('expression "": expected a number or a parameter name at column 1');
    expect(problem('3 4')).toBe('expression "3 4": unexpected "4" at column 3');
    expect(problem('2 ^ 3')).toBe('expression "2 ^ 3": unexpected "^" at column 3');
    expect(problem('min(1, )')).toBe('expression "min(1, )": unexpected ")" at column 8');
    expect(problem('min()')).toBe('expression "min()": unexpected ")" at column 5');
    expect(problem('2N')).toBe('expression "2N": unexpected "N" after the number 2 at column 2');
    expect(problem('f(2)')).toBe('expression "f(2)": unexpected "(" at column 2');
  });

  it('reports unknown names, division and remainder by zero, and non-finite results', () => {
    expect(problem('2 * M')).toBe('expression "2 * M": unknown parameter "M" at column 5');
    expect(evaluateExpression('2 * M', {})).toMatchObject({ ok: false, error: { unknown: 'M' } });
    expect(problem('W / (N - N)', { W: 1, N: 2 })).toBe('expression "W / (N - N)": division by zero at column 3');
    expect(problem('5 % 0')).toBe('expression "5 % 0": remainder by zero at column 3');
    expect(problem('1e308 * 10')).toBe('expression "1e308 * 10": gives Infinity, not a finite number');
    expect(value('-0 * 1')).toBe(0);
    expect(Object.is(value('-0 * 1'), -0)).toBe(false);
  });

  it('bounds length and nesting', () => {
    expect(problem('1+'.repeat(600) + '1')).toMatch(/longer than 1000 characters$/);
    const deep = '('.repeat(MAX_EXPRESSION_DEPTH + 1) + '1' + ')'.repeat(MAX_EXPRESSION_DEPTH + 1);
    expect(problem(deep)).toMatch(/nested deeper than 64 levels at column 65$/);
    expect(problem('-'.repeat(100) + '1')).toMatch(/nested deeper than 64 levels/);
    const ok = '('.repeat(MAX_EXPRESSION_DEPTH) + '1' + ')'.repeat(MAX_EXPRESSION_DEPTH);
    expect(value(ok)).toBe(1);
    // A long flat chain is fine (no nesting).
    expect(value(Array.from({ length: 300 }, () => '1').join('+'))).toBe(300);
  });

  it('lists the names an expression reads, once each', () => {
    const p = parseExpression('W * H + W / min(N, 2)');
    expect(p.ok && p.names).toEqual(['W', 'H', 'N']);
  });

  it('agrees with arithmetic on random integer expressions and never throws on any text', () => {
    const leaf = fc.integer({ min: -1000, max: 1000 }).map((n) => ({ text: n < 0 ? `(${n})` : String(n), value: n }));
    const expr = fc.letrec<{ e: { text: string; value: number } }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.tuple(tie('e'), fc.constantFrom('+', '-', '*'), tie('e')).map(([a, op, b]) => ({
          text: `(${a.text} ${op} ${b.text})`,
          value: op === '+' ? a.value + b.value : op === '-' ? a.value - b.value : a.value * b.value,
        })),
        fc.tuple(tie('e'), tie('e')).map(([a, b]) => ({ text: `max(${a.text}, ${b.text})`, value: Math.max(a.value, b.value) })),
      ),
    })).e;
    fc.assert(
      fc.property(expr, (e) => {
        const r = evaluateExpression(e.text, {});
        if (e.text.length <= 1000 && r.ok) expect(r.value).toBe(e.value === 0 ? 0 : e.value);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        const r = evaluateExpression(s, { N: 1 });
        expect(typeof r.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });
});

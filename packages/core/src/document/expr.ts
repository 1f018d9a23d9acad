// The parameter expression language: numbers, parameter names, + - * / %, unary minus,
// parentheses, min(...) and max(...). Parsed by hand (documents arrive from the network: no
// code is ever evaluated), bounded in length and nesting so a hostile document costs little.

/** Longest expression accepted, in characters. */
export const MAX_EXPRESSION_LENGTH = 1000;
/** Deepest nesting accepted (parentheses, calls, unary minus). */
export const MAX_EXPRESSION_DEPTH = 64;

export type ExprNode =
  | { kind: 'number'; value: number }
  | { kind: 'name'; name: string; column: number }
  | { kind: 'negate'; operand: ExprNode }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/' | '%'; left: ExprNode; right: ExprNode; column: number }
  | { kind: 'call'; fn: 'min' | 'max'; args: ExprNode[] };

/** What went wrong, as a sentence naming the expression (`expression "2 * (N": expected ")" at column 7`). */
export interface ExprError {
  message: string;
  /** Set when the problem is a name with no value: the caller may suggest the nearest one. */
  unknown?: string;
}

export type Parsed = { ok: true; expr: ExprNode; names: string[] } | { ok: false; error: ExprError };

const quote = (text: string) => `expression ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}`;

class Parser {
  private at = 0;
  private depth = 0;
  readonly names: string[] = [];
  constructor(private readonly text: string) {}

  fail(message: string, column = this.at + 1): never {
    throw new SyntaxFailure(`${quote(this.text)}: ${message} at column ${column}`);
  }

  skip() {
    while (this.at < this.text.length && /\s/.test(this.text[this.at])) this.at++;
  }

  peek(): string {
    this.skip();
    return this.text[this.at] ?? '';
  }

  parse(): ExprNode {
    if (this.text.trim() === '') this.fail('expected a number or a parameter name', 1);
    const e = this.sum();
    if (this.peek() !== '') this.fail(`unexpected "${this.text[this.at]}"`);
    return e;
  }

  sum(): ExprNode {
    let left = this.product();
    for (let c = this.peek(); c === '+' || c === '-'; c = this.peek()) {
      const column = ++this.at;
      left = { kind: 'binary', op: c, left, right: this.product(), column };
    }
    return left;
  }

  product(): ExprNode {
    let left = this.unary();
    for (let c = this.peek(); c === '*' || c === '/' || c === '%'; c = this.peek()) {
      const column = ++this.at;
      left = { kind: 'binary', op: c, left, right: this.unary(), column };
    }
    return left;
  }

  /** Runs `f` one level deeper; `column` is where the level opens. */
  nest<T>(column: number, f: () => T): T {
    if (++this.depth > MAX_EXPRESSION_DEPTH) this.fail(`nested deeper than ${MAX_EXPRESSION_DEPTH} levels`, column);
    const r = f();
    this.depth--;
    return r;
  }

  unary(): ExprNode {
    const c = this.peek();
    if (c === '-' || c === '+') {
      return this.nest(++this.at, () => {
        const operand = this.unary();
        return c === '-' ? { kind: 'negate', operand } : operand;
      });
    }
    return this.primary();
  }

  primary(): ExprNode {
    const c = this.peek();
    const start = this.at;
    if (c === '(') {
      const e = this.nest(++this.at, () => this.sum());
      this.expect(')');
      return e;
    }
    const num = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(this.text.slice(start));
    if (num) {
      this.at += num[0].length;
      if (/^[A-Za-z_]/.test(this.text[this.at] ?? '')) this.fail(`unexpected "${this.text[this.at]}" after the number ${num[0]}`);
      return { kind: 'number', value: Number(num[0]) };
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(start));
    if (id) {
      this.at += id[0].length;
      const name = id[0];
      if ((name === 'min' || name === 'max') && this.peek() === '(') {
        return this.nest(++this.at, () => {
          const args = [this.sum()];
          while (this.peek() === ',') {
            this.at++;
            args.push(this.sum());
          }
          this.expect(')');
          return { kind: 'call', fn: name, args } as ExprNode;
        });
      }
      this.names.push(name);
      return { kind: 'name', name, column: start + 1 };
    }
    if (c === '') this.fail('expected a number, a parameter name or "("');
    this.fail(`unexpected "${c}"`);
  }

  expect(c: string) {
    if (this.peek() !== c) this.fail(`expected "${c}"`);
    this.at++;
  }
}

class SyntaxFailure extends Error {}

/** Parses an expression; the names it reads come back in order of first appearance (deduplicated). */
export function parseExpression(text: string): Parsed {
  if (text.length > MAX_EXPRESSION_LENGTH) return { ok: false, error: { message: `${quote(text)}: longer than ${MAX_EXPRESSION_LENGTH} characters` } };
  const p = new Parser(text);
  try {
    const expr = p.parse();
    return { ok: true, expr, names: [...new Set(p.names)] };
  } catch (e) {
    if (e instanceof SyntaxFailure) return { ok: false, error: { message: e.message } };
    throw e;
  }
}

/** Values of names: a record, or a lookup (undefined: no such name). */
export type ExprScope = Record<string, number> | ((name: string) => number | undefined);

/** Evaluates a parsed expression; division or % by zero and non-finite results are errors naming the expression. */
export function evaluateParsed(text: string, expr: ExprNode, scope: ExprScope): { ok: true; value: number } | { ok: false; error: ExprError } {
  const lookup = typeof scope === 'function' ? scope : (n: string) => (Object.hasOwn(scope, n) ? scope[n] : undefined);
  let error: ExprError | undefined;
  const ev = (e: ExprNode): number => {
    if (error) return NaN;
    switch (e.kind) {
      case 'number':
        return e.value;
      case 'name': {
        const v = lookup(e.name);
        if (v === undefined) error = { message: `${quote(text)}: unknown parameter "${e.name}" at column ${e.column}`, unknown: e.name };
        return v ?? NaN;
      }
      case 'negate':
        return -ev(e.operand);
      case 'call': {
        const args = e.args.map(ev);
        return e.fn === 'min' ? Math.min(...args) : Math.max(...args);
      }
      case 'binary': {
        const a = ev(e.left);
        const b = ev(e.right);
        if (error) return NaN;
        if ((e.op === '/' || e.op === '%') && b === 0) {
          error = { message: `${quote(text)}: ${e.op === '/' ? 'division' : 'remainder'} by zero at column ${e.column}` };
          return NaN;
        }
        return e.op === '+' ? a + b : e.op === '-' ? a - b : e.op === '*' ? a * b : e.op === '/' ? a / b : a % b;
      }
    }
  };
  const value = ev(expr);
  if (error) return { ok: false, error };
  if (!Number.isFinite(value)) return { ok: false, error: { message: `${quote(text)}: gives ${value}, not a finite number` } };
  // -0 and 0 are one value to everything downstream (sizes, JSON).
  return { ok: true, value: value === 0 ? 0 : value };
}

/** Parses and evaluates `text` over `scope` (param name -> value). */
export function evaluateExpression(text: string, scope: ExprScope): { ok: true; value: number } | { ok: false; error: ExprError } {
  const parsed = parseExpression(text);
  return parsed.ok ? evaluateParsed(text, parsed.expr, scope) : parsed;
}

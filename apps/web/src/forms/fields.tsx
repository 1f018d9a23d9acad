import { useEffect, useState } from 'react';
import { parseExpression, type Expr } from '@pipeloom/core';
import { projectStore } from '../store/project.js';

// Inspector fields. A field commits each valid keystroke as a change that coalesces with the
// others of the same field, so typing "1024" is one undo step; blur seals the burst.

let focusSerial = 0;

export function useBurstKey(name: string) {
  const [key, setKey] = useState(() => `${name}:${++focusSerial}`);
  return {
    key,
    onFocus: () => setKey(`${name}:${++focusSerial}`),
    onBlur: () => projectStore.getState().seal(),
  };
}

export function NumberField(props: {
  label: string;
  value: number;
  onCommit: (v: number, coalesce: string) => void;
  min?: number;
  max?: number;
  integer?: boolean;
  unit?: string;
  /** Display scale: shown = value / scale (e.g. GiB for bytes). */
  scale?: number;
  testid?: string;
  title?: string;
}) {
  const scale = props.scale ?? 1;
  const shown = +(props.value / scale).toPrecision(10);
  const [text, setText] = useState(String(shown));
  const burst = useBurstKey(props.label);
  useEffect(() => setText(String(shown)), [shown]);
  const parsed = Number(text);
  let problem: string | null = null;
  if (text.trim() === '' || !Number.isFinite(parsed)) problem = 'enter a number';
  else if (props.integer && !Number.isInteger(parsed * scale)) problem = 'must be a whole number';
  else if (props.min !== undefined && parsed * scale < props.min) problem = `at least ${props.min / scale}`;
  else if (props.max !== undefined && parsed * scale > props.max) problem = `at most ${props.max / scale}`;
  const range = props.max !== undefined ? `${props.min !== undefined ? props.min / scale : '−∞'} … ${props.max !== undefined ? props.max / scale : '∞'}` : '';
  return (
    <label className={`field${problem ? ' invalid' : ''}`} title={props.title}>
      <span className="field-label">{props.label}</span>
      <span className="field-input">
        <input
          type="text"
          inputMode="decimal"
          value={text}
          data-testid={props.testid}
          onFocus={burst.onFocus}
          onBlur={() => {
            burst.onBlur();
            if (problem) setText(String(shown));
          }}
          onChange={(e) => {
            setText(e.target.value);
            const v = Number(e.target.value);
            const ok =
              e.target.value.trim() !== '' &&
              Number.isFinite(v) &&
              (!props.integer || Number.isInteger(v * scale)) &&
              (props.min === undefined || v * scale >= props.min) &&
              (props.max === undefined || v * scale <= props.max);
            if (ok && v * scale !== props.value) props.onCommit(v * scale, burst.key);
          }}
        />
        {props.unit && <span className="unit">{props.unit}</span>}
      </span>
      {problem ? <FieldError testid={props.testid} problem={problem} range={range} /> : range ? <span className="field-hint">{range}</span> : null}
    </label>
  );
}

export function TextField(props: {
  label: string;
  value: string;
  onCommit: (v: string) => string | null | void;
  testid?: string;
  placeholder?: string;
  multiline?: boolean;
}) {
  // Commits on Enter (Ctrl+Enter when multiline) or blur: ids are renamed as a whole, not letter by letter.
  const [text, setText] = useState(props.value);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    setText(props.value);
    setProblem(null);
  }, [props.value]);
  const commit = () => {
    if (text === props.value) return;
    const why = props.onCommit(text);
    if (why) setProblem(why);
  };
  const edit = (e: { target: { value: string } }) => {
    setText(e.target.value);
    setProblem(null);
  };
  /** Enter commits (with Ctrl or Cmd in a multi-line box, where Enter is a new line); Escape reverts. */
  const keyDown = (e: { key: string }, enterCommits: boolean) => {
    if (e.key === 'Enter' && enterCommits) commit();
    if (e.key === 'Escape') setText(props.value);
  };
  return (
    <label className={`field${problem ? ' invalid' : ''}`}>
      <span className="field-label">{props.label}</span>
      <span className="field-input">
        {props.multiline ? (
          <textarea
            className="mono"
            rows={Math.min(16, Math.max(4, text.split('\n').length))}
            spellCheck={false}
            value={text}
            data-testid={props.testid}
            onChange={edit}
            onBlur={commit}
            onKeyDown={(e) => keyDown(e, e.ctrlKey || e.metaKey)}
          />
        ) : (
          <input
            type="text"
            value={text}
            placeholder={props.placeholder}
            data-testid={props.testid}
            onChange={edit}
            onBlur={commit}
            onKeyDown={(e) => keyDown(e, true)}
          />
        )}
      </span>
      {problem && <span className="field-error">{problem}</span>}
    </label>
  );
}

export function SelectField<T extends string>(props: {
  label: string;
  value: T;
  options: readonly { value: T; label: string }[];
  onCommit: (v: T) => void;
  testid?: string;
}) {
  return (
    <label className="field">
      <span className="field-label">{props.label}</span>
      <span className="field-input">
        <select value={props.value} data-testid={props.testid} onChange={(e) => props.onCommit(e.target.value as T)}>
          {props.options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      </span>
    </label>
  );
}

export function CheckField(props: { label: string; value: boolean; onCommit: (v: boolean) => void; testid?: string }) {
  return (
    <label className="field check">
      <input type="checkbox" checked={props.value} data-testid={props.testid} onChange={(e) => props.onCommit(e.target.checked)} />
      <span className="field-label">{props.label}</span>
    </label>
  );
}

export const validId = (s: string) => (/^[A-Za-z_][A-Za-z0-9_@.\-]*$/.test(s) ? null : 'letters, digits, _ @ . - ; starts with a letter');

/**
 * A number or an expression over the parameters in scope (`names`): a number is checked against
 * the range as in NumberField; an expression must parse and read only names in scope, and shows
 * its value (`evaluated`, from core's evaluation of the document). Valid text commits on each
 * keystroke, coalesced per field visit like NumberField.
 */
export function ExprField(props: {
  label: string;
  value: Expr;
  evaluated?: number;
  names: ReadonlySet<string>;
  onCommit: (v: Expr, coalesce: string) => void;
  min?: number;
  max?: number;
  integer?: boolean;
  unit?: string;
  testid?: string;
  title?: string;
  placeholder?: string;
  /** A further check of a valid number or expression (the problem as shown), after the range's. */
  check?: (v: Expr) => string | null;
}) {
  const shown = String(props.value);
  const [text, setText] = useState(shown);
  const burst = useBurstKey(props.label);
  useEffect(() => setText(shown), [shown]);
  const check = (t: string): { value?: Expr; problem: string | null } => {
    const trimmed = t.trim();
    if (trimmed === '') return { problem: props.placeholder !== undefined ? null : 'enter a number or an expression' };
    const n = Number(trimmed);
    if (Number.isFinite(n)) {
      if (props.integer && !Number.isInteger(n)) return { problem: 'must be a whole number' };
      if (props.min !== undefined && n < props.min) return { problem: `at least ${props.min}` };
      if (props.max !== undefined && n > props.max) return { problem: `at most ${props.max}` };
      return { value: n, problem: props.check?.(n) ?? null };
    }
    const p = parseExpression(trimmed);
    if (!p.ok) return { problem: p.error.message };
    const unknown = p.names.find((x) => !props.names.has(x));
    if (unknown) return { problem: `unknown parameter "${unknown}"` };
    return { value: trimmed, problem: props.check?.(trimmed) ?? null };
  };
  const { problem } = check(text);
  const range = props.max !== undefined ? `${props.min ?? '−∞'} … ${props.max}` : '';
  const isExpr = typeof props.value === 'string' && props.value.trim() !== '';
  return (
    <label className={`field${problem ? ' invalid' : ''}`} title={props.title}>
      <span className="field-label">{props.label}</span>
      <span className="field-input">
        <input
          type="text"
          className={isExpr ? 'mono' : undefined}
          value={text}
          placeholder={props.placeholder}
          spellCheck={false}
          data-testid={props.testid}
          onFocus={burst.onFocus}
          onBlur={() => {
            burst.onBlur();
            if (problem) setText(shown);
          }}
          onChange={(e) => {
            setText(e.target.value);
            const r = check(e.target.value);
            if (r.problem) return;
            const v = r.value ?? '';
            if (v !== props.value) props.onCommit(v, burst.key);
          }}
        />
        {props.unit && <span className="unit">{props.unit}</span>}
      </span>
      {problem ? (
        <FieldError testid={props.testid} problem={problem} range={range} />
      ) : isExpr && props.evaluated !== undefined ? (
        <span className="field-hint" data-testid={props.testid ? `${props.testid}-value` : undefined}>
          = {props.evaluated}
          {range ? ` (${range})` : ''}
        </span>
      ) : range ? (
        <span className="field-hint">{range}</span>
      ) : null}
    </label>
  );
}

/** A field's problem in words, with the range it must be in where it has one. */
function FieldError({ testid, problem, range }: { testid?: string; problem: string; range?: string }) {
  return (
    <span className="field-error" data-testid={testid ? `${testid}-error` : undefined}>
      {problem}
      {range ? ` (${range})` : ''}
    </span>
  );
}

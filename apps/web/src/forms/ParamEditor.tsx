import type { Expr, WrittenDocument } from '@pipeloom/core';
import type { ParamSpec, ParamValue } from '@pipeloom/kernels';
import { paramDoc } from '../lib/kernelDocs.js';
import { scopeNames, type GraphAt } from '../document/graphs.js';
import { CheckField, ExprField, SelectField, TextField } from './fields.js';

// One kernel param's field by its type (a number or an expression, a choice, a switch, text)
// with its documentation under it: kernel nodes' and scan operators' params alike.

export function ParamEditor({
  doc,
  at,
  name,
  spec,
  value,
  evaluated,
  placeholder,
  onCommit,
}: {
  doc: WrittenDocument;
  at?: GraphAt;
  name: string;
  spec: ParamSpec;
  value: ParamValue | undefined;
  evaluated?: ParamValue;
  placeholder?: string;
  onCommit: (v: ParamValue, coalesce?: string) => void;
}) {
  const testid = `param-${name}`;
  const field = (() => {
    switch (spec.type) {
      case 'int':
      case 'float':
        return (
          <ExprField
            label={name}
            title={paramDoc(spec)}
            value={value === undefined ? '' : typeof value === 'number' || typeof value === 'string' ? (value as Expr) : Number(value)}
            placeholder={placeholder}
            evaluated={typeof evaluated === 'number' ? evaluated : undefined}
            names={scopeNames(doc, at)}
            min={spec.min}
            max={spec.max}
            integer={spec.type === 'int'}
            unit={spec.unit}
            testid={testid}
            onCommit={onCommit}
          />
        );
      case 'bool':
        return <CheckField label={name} value={Boolean(value)} testid={testid} onCommit={(v) => onCommit(v)} />;
      case 'enum':
        return (
          <SelectField
            label={name}
            value={String(value)}
            options={(spec.values ?? []).map((v) => ({ value: v, label: v }))}
            testid={testid}
            onCommit={(v) => onCommit(v)}
          />
        );
      case 'string':
        return (
          <TextField
            label={name}
            value={value === undefined ? '' : String(value)}
            placeholder={placeholder}
            multiline={spec.multiline}
            testid={testid}
            onCommit={(v) => void onCommit(v)}
          />
        );
    }
  })();
  return (
    <>
      {field}
      <div className="param-doc" data-testid={`${testid}-doc`}>
        {paramDoc(spec)}
      </div>
    </>
  );
}

import { memo } from 'react';
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { formatDataType } from '@pipeloom/kernels';
import type { BufferNode } from '@pipeloom/core';
import { formatBytes } from '../lib/format.js';
import { memoryColor } from '../lib/color.js';

export type IgComputeNode = Node<{ id: string; kernel: string; schedule?: number; latency?: number; color?: string }, 'igNode'>;
export type IgBufferNode = Node<{ buffer: BufferNode }, 'igBuffer'>;
export type IgPeNode = Node<{ pe: string; kind?: string; color?: string }, 'igPe'>;

function ComputeView({ data, selected }: NodeProps<IgComputeNode>) {
  return (
    <div
      className={`ig-node${selected ? ' selected' : ''}`}
      style={data.color ? ({ '--pe': data.color } as React.CSSProperties) : undefined}
      data-testid={`ig-node-${data.id}`}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="ig-label" title={`${data.id} on its PE: schedule ${data.schedule ?? '?'}, latency ${data.latency ?? '?'} cycles`}>
        {data.id}{' '}
        <span className="ig-sl">
          ({data.schedule ?? '?'}, {data.latency ?? '?'})
        </span>
      </div>
      <div className="ig-kernel" title={data.kernel}>
        {data.kernel}
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

function BufferView({ data, selected }: NodeProps<IgBufferNode>) {
  const b = data.buffer;
  return (
    <div
      className={`ig-buffer${selected ? ' selected' : ''}`}
      style={{ background: memoryColor(b.color) }}
      title={`${b.id} on ${b.pe}\nholds ${b.source}.${b.port}: ${formatDataType(b.type)}\n${formatBytes(b.bytes)} × ${b.depth} slot(s), memory colour ${b.color}`}
      data-testid={`ig-buffer-${b.id}`}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="ig-label">{b.id}</div>
      <div className="ig-kernel">
        {formatBytes(b.bytes)} · c{b.color}
      </div>
      <span
        className={`depth ${b.depth === 1 ? 'single' : 'double'}`}
        data-testid={`ig-depth-${b.id}`}
        title={
          b.depth === 1
            ? 'single buffer'
            : b.depth === 2
              ? 'double buffer: writer and reader work on alternate slots'
              : `${b.depth} slots: kept until a later sibling input arrives`
        }
      >
        {b.depth === 1 ? 'single' : b.depth === 2 ? 'double' : `×${b.depth}`}
      </span>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

function PeView({ data }: NodeProps<IgPeNode>) {
  return (
    <div className="ig-pe" style={data.color ? ({ '--pe': data.color } as React.CSSProperties) : undefined} data-testid={`ig-pe-${data.pe}`}>
      <div className="ig-pe-title">
        {data.pe} {data.kind && <span className="muted">{data.kind}</span>}
      </div>
    </div>
  );
}

export const igNodeTypes = { igNode: memo(ComputeView), igBuffer: memo(BufferView), igPe: memo(PeView) };

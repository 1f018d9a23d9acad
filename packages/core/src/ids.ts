// Branded ids: a NodeId is never passed where a PeId is expected.
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type NodeId = Brand<string, 'NodeId'>;
export type PeId = Brand<string, 'PeId'>;
export type HostId = Brand<string, 'HostId'>;
export type BufferId = Brand<string, 'BufferId'>;

export const nodeId = (s: string) => s as NodeId;
export const peId = (s: string) => s as PeId;
export const hostId = (s: string) => s as HostId;
export const bufferId = (s: string) => s as BufferId;

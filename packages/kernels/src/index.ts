export * from './types.js';
export * from './registry.js';

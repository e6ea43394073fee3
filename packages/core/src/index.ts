/**
 * @profkit/core: the profile data model, builder, views, validator, operations, the adapter
 * contract and registry, and shared I/O. The only public entry of the package.
 */
export * from './model.js';
export * from './errors.js';
export * from './columns.js';
export * from './create.js';
export * from './builder.js';
export * from './views.js';
export * from './io.js';
export * from './limits.js';
export * from './adapter.js';
export * from './ops/index.js';
export * from './ops/report.js';
export * from './flame/index.js';
export * from './dump.js';
export * from './pprof-text.js';
export * from './schema.js';
export * from './validate.js';
export * from './registry.js';
export * from './discovery.js';
export * from './sniff-util.js';
export * from './known-formats.js';
export * from './symbolz.js';
export * from './redirects.js';
export * from './net.js';
export * from './transform.js';

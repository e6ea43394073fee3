/** Test helpers shared by the profkit packages (a private workspace package, never published). */
export * from './paths.js';
export * from './random.js';
export * from './tools.js';
export * from './cli.js';
export * from './goref.js';
export * from './errors.js';
export * from './http.js';

/** @profkit/fuzz: the mutation fuzzer of profkit's readers (private workspace tool). */
export { fuzz, type FuzzOptions, type FuzzStats, type Crash } from './engine.js';
export { mutate, rng, varint, type Rng } from './mutate.js';
export { specialInputs, gzipBomb, lengthBombs, type SpecialInput } from './special.js';
export { makeTarget, TARGET_NAMES, FUZZ_LIMITS, sharedFixturesDir, type Target, type TargetName } from './targets.js';
export { memoryBound, throwSite } from './child.js';

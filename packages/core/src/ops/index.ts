/** Profile operations (google/pprof semantics, documented in docs/operations.md). */
export { compact } from './compact.js';
export { merge, checkCompatible, combineFacts, compatibilizeSampleTypes, type MergeOptions } from './merge.js';
export { aggregateStacks, aggregateBy, type Granularity, type AggregateOptions } from './aggregate.js';
export { scale, scaleValue, normalize } from './scale.js';
export { diff, setLabel, DIFF_BASE_LABEL, type DiffOptions } from './diff.js';
export { prune, pruneFrom, removeUninteresting, applyDropFrames, simplifyFunctionName, type PruneOptions, type DropFramesPatterns, type AppliedDropFrames } from './prune.js';
export { filterSamples, compileTagFilter, numLabelUnits, type FilterOptions, type TagFilter } from './filter.js';
export { selectSampleTypes } from './select.js';
export { topTable, formatTopTable, cleanPath, type TopOptions, type TopEntry, type TopTable } from './top.js';
export { formatValue, formatPercentage, scaleMeasurement } from './format.js';
export { toFolded } from './folded.js';
export { compilePattern, compileGoPattern, type Pattern, type PatternMatcher } from './regex.js';
export { goGraph, goTrimPath, printableName, sortGoNodes, type GoGraph, type GoGraphNode, type GoGraphCall, type GoNodeInfo, type GoGranularity, type GoGraphOptions } from './pprof-graph.js';
export { listReport, type ListReportOptions, type ListReport, type ListRoutine, type ListLine, type SourceLines } from './source.js';
export { callgrindReport, type CallgrindOptions } from './callgrind.js';
export { topProtoReport, type TopProtoOptions } from './topproto.js';

/** The line splitter moved to @profkit/core (shared by the text readers); re-exported for compatibility. */
export { LineSplitter, DEFAULT_MAX_LINE_LENGTH, type LineSink, type LineSplitterOptions } from '@profkit/core';

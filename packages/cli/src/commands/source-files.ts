/**
 * Reading the source files a profile names, as `go tool pprof -list` finds them: core's
 * (`@profkit/core/node`), shared with the source view of `profkit web`, whose server reads
 * them with the same rules.
 */
export { sourceFileReader, goErrnoText, MAX_SOURCE_FILE_BYTES } from '@profkit/core/node';

/** The JSON field checks moved to @profkit/core (shared by the JSON readers); re-exported under the names this package uses. */
import { checkLimit, parseJsonBytes, type JsonSource, type ReadLimits } from '@profkit/core';

export {
  MAX_JSON_BYTES,
  schemaError,
  parseJsonBytes,
  isJsonObject as isObject,
  objectAt,
  arrayAt,
  numberAt,
  integerAt,
  stringAt,
  describeJson as describe,
  type JsonSource,
} from '@profkit/core';

/**
 * The whole input parsed, after checking it against `maxInputBytes`: the registry bounds what it
 * reads, but the byte readers are public and their callers' limits must hold too.
 */
export function parseInputJson(bytes: Uint8Array, src: JsonSource, limits: ReadLimits | undefined): unknown {
  checkLimit(limits, 'maxInputBytes', bytes.length, 'input bytes', { file: src.file });
  return parseJsonBytes(bytes, src);
}

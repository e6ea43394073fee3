/** The JSON field checks moved to @profkit/core (shared by the JSON readers); re-exported under the names this package uses. */
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

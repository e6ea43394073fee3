/** The adapter's name (also its `.extensions` key) and its format id. */
export const ADAPTER_NAME = 'perf';
export const FORMAT_ID = 'perf-script';

/**
 * The granularity of report nodes (pprof `-granularity`: `-functions`, `-filefunctions`,
 * `-files`, `-lines`, `-addresses`) and which frame attributes each keeps (driver `aggregate`).
 */

import { ErrorCodes, ProfkitError } from '../errors.js';

export type ReportGranularity = 'function' | 'filefunctions' | 'file' | 'line' | 'address';

/** The frame attributes that make a node at granularity `by` (pprof `Profile.Aggregate`'s flags). */
export function granularityFields(by: ReportGranularity): { withName: boolean; withFile: boolean; withLine: boolean; withAddress: boolean } {
  switch (by) {
    case 'function':
      return { withName: true, withFile: false, withLine: false, withAddress: false };
    case 'filefunctions':
      return { withName: true, withFile: true, withLine: false, withAddress: false };
    case 'file':
      return { withName: false, withFile: true, withLine: false, withAddress: false };
    case 'line':
      return { withName: true, withFile: true, withLine: true, withAddress: false };
    case 'address':
      return { withName: true, withFile: true, withLine: true, withAddress: true };
  }
}

/** profkit's and pprof's spellings of the granularities (`line`, `lines`, `address`, `addresses`, …). */
const SPELLINGS: Record<string, ReportGranularity> = {
  function: 'function',
  functions: 'function',
  filefunction: 'filefunctions',
  filefunctions: 'filefunctions',
  file: 'file',
  files: 'file',
  line: 'line',
  lines: 'line',
  address: 'address',
  addresses: 'address',
};

/** A granularity from its profkit or pprof name; a `PROFKIT_E_USAGE` error naming `option` otherwise. */
export function parseGranularity(text: string, option = 'granularity'): ReportGranularity {
  const g = Object.hasOwn(SPELLINGS, text) ? SPELLINGS[text] : undefined;
  if (g === undefined) {
    throw new ProfkitError(ErrorCodes.USAGE, `--${option} ${text}: expected function, filefunctions, file, line or address (pprof's plural spellings work too)`, {
      option,
      rule: 'the granularity is one of pprof -granularity values',
    });
  }
  return g;
}

import {
  DATA_FORMAT_VERSION,
  type FunctionsTable,
  type InlineLinesTable,
  type LabelsTable,
  type LocationsTable,
  type MappingsTable,
  type Profile,
  type ProfileFacts,
  type SamplesTable,
} from './model.js';

export function emptyFacts(): ProfileFacts {
  return {
    period: 0n,
    time_nanos: 0n,
    duration_nanos: 0n,
    comments: [],
    drop_frames: '',
    keep_frames: '',
    default_sample_type: '',
    doc_url: '',
  };
}

export function emptySamples(sampleTypeCount: number): SamplesTable {
  const values = Array.from({ length: sampleTypeCount }, () => new BigInt64Array(0));
  return {
    value: values[0] ?? new BigInt64Array(0),
    locations: { offsets: new Uint32Array(1), location_id: new Uint32Array(0) },
    '.values': values,
  };
}

export function emptyLocations(): LocationsTable {
  return {
    location_id: new Uint32Array(0),
    function_id: new Uint32Array(0),
    line: new Float64Array(0),
    '.column': new Float64Array(0),
    '.address': new BigUint64Array(0),
    '.mapping_id': new Uint32Array(0),
    '.is_folded': new Uint8Array(0),
    '.inline_offsets': new Uint32Array(1),
  };
}

export function emptyFunctions(): FunctionsTable {
  return { function_id: new Uint32Array(0), name: [], system_name: [], filename: [], start_line: new Float64Array(0) };
}

export function emptyInlineLines(): InlineLinesTable {
  return { function_id: new Uint32Array(0), line: new Float64Array(0), column: new Float64Array(0) };
}

export function emptyMappings(): MappingsTable {
  return {
    mapping_id: new Uint32Array(0),
    memory_start: new BigUint64Array(0),
    memory_limit: new BigUint64Array(0),
    file_offset: new BigUint64Array(0),
    filename: [],
    build_id: [],
    has_functions: new Uint8Array(0),
    has_filenames: new Uint8Array(0),
    has_line_numbers: new Uint8Array(0),
    has_inline_frames: new Uint8Array(0),
  };
}

export function emptyLabels(): LabelsTable {
  return { key: [], str: [], num: new BigInt64Array(0), num_unit: [], is_num: new Uint8Array(0) };
}

/** Parts a caller may supply to `createProfile`; everything missing is empty. */
export interface ProfileParts {
  sample_types?: { type: string[]; unit: string[] };
  samples?: SamplesTable;
  locations?: Partial<LocationsTable> & Pick<LocationsTable, 'location_id'>;
  functions?: FunctionsTable;
  '.inline_lines'?: InlineLinesTable;
  '.mappings'?: MappingsTable;
  '.labels'?: LabelsTable;
  '.profile'?: Partial<ProfileFacts>;
  '.extensions'?: Profile['.extensions'];
}

/**
 * Assembles a profile from columns, filling absent optional columns of `locations` with their
 * "unknown" value (0). Columns are used as given, not copied.
 */
export function createProfile(parts: ProfileParts = {}): Profile {
  const sampleTypes = parts.sample_types ?? { type: [], unit: [] };
  const samples = parts.samples ?? emptySamples(sampleTypes.type.length);
  const loc = parts.locations;
  let locations: LocationsTable;
  if (!loc) locations = emptyLocations();
  else {
    const n = loc.location_id.length;
    locations = {
      location_id: loc.location_id,
      function_id: loc.function_id ?? new Uint32Array(n),
      line: loc.line ?? new Float64Array(n),
      '.column': loc['.column'] ?? new Float64Array(n),
      '.address': loc['.address'] ?? new BigUint64Array(n),
      '.mapping_id': loc['.mapping_id'] ?? new Uint32Array(n),
      '.is_folded': loc['.is_folded'] ?? new Uint8Array(n),
      '.inline_offsets': loc['.inline_offsets'] ?? new Uint32Array(n + 1),
    };
  }
  return {
    meta: { key: ['version'], value: [DATA_FORMAT_VERSION] },
    sample_types: sampleTypes,
    samples,
    locations,
    functions: parts.functions ?? emptyFunctions(),
    '.inline_lines': parts['.inline_lines'] ?? emptyInlineLines(),
    '.mappings': parts['.mappings'] ?? emptyMappings(),
    '.labels': parts['.labels'] ?? emptyLabels(),
    '.profile': { ...emptyFacts(), ...(parts['.profile'] ?? {}) },
    '.extensions': parts['.extensions'] ?? {},
  };
}

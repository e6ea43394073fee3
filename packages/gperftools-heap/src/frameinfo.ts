/**
 * The default drop/keep frame regexps google/pprof attaches to every legacy profile
 * (`addLegacyFrameInfo`), chosen by the profile's sample types.
 */

import type { LProfile } from './legacy-model.js';

const heapzSampleTypes = [
  ['allocations', 'size'],
  ['objects', 'space'],
  ['inuse_objects', 'inuse_space'],
  ['alloc_objects', 'alloc_space'],
  ['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space'],
];
const contentionzSampleTypes = [['contentions', 'delay']];

export const ALLOC_DROP_FRAMES = [
  'calloc',
  'cfree',
  'malloc',
  'free',
  'memalign',
  'do_memalign',
  '(__)?posix_memalign',
  'pvalloc',
  'valloc',
  'realloc',
  'tcmalloc::.*',
  'tc_calloc',
  'tc_cfree',
  'tc_malloc',
  'tc_free',
  'tc_memalign',
  'tc_posix_memalign',
  'tc_pvalloc',
  'tc_valloc',
  'tc_realloc',
  'tc_new',
  'tc_delete',
  'tc_newarray',
  'tc_deletearray',
  'tc_new_nothrow',
  'tc_newarray_nothrow',
  'malloc_zone_malloc',
  'malloc_zone_calloc',
  'malloc_zone_valloc',
  'malloc_zone_realloc',
  'malloc_zone_memalign',
  'malloc_zone_free',
  'runtime\\..*',
  'BaseArena::.*',
  '(::)?do_malloc_no_errno',
  '(::)?do_malloc_pages',
  '(::)?do_malloc',
  'DoSampledAllocation',
  'MallocedMemBlock::MallocedMemBlock',
  '_M_allocate',
  '__builtin_(vec_)?delete',
  '__builtin_(vec_)?new',
  '__gnu_cxx::new_allocator::allocate',
  '__libc_malloc',
  '__malloc_alloc_template::allocate',
  'allocate',
  'cpp_alloc',
  'operator new(\\[\\])?',
  'simple_alloc::allocate',
].join('|');

export const ALLOC_KEEP_FRAMES = ['runtime\\.panic', 'runtime\\.reflectcall', 'runtime\\.call[0-9]*'].join('|');

export const CPU_DROP_FRAMES = ['ProfileData::Add', 'ProfileData::prof_handler', 'CpuProfiler::prof_handler', '__pthread_sighandler', '__restore'].join('|');

export const LOCK_DROP_FRAMES = [
  'RecordLockProfileData',
  '(base::)?RecordLockProfileData.*',
  '(base::)?SubmitMutexProfileData.*',
  '(base::)?SubmitSpinLockProfileData.*',
  '(base::Mutex::)?AwaitCommon.*',
  '(base::Mutex::)?Unlock.*',
  '(base::Mutex::)?UnlockSlow.*',
  '(base::Mutex::)?ReaderUnlock.*',
  '(base::MutexLock::)?~MutexLock.*',
  '(Mutex::)?AwaitCommon.*',
  '(Mutex::)?Unlock.*',
  '(Mutex::)?UnlockSlow.*',
  '(Mutex::)?ReaderUnlock.*',
  '(MutexLock::)?~MutexLock.*',
  '(SpinLock::)?Unlock.*',
  '(SpinLock::)?SlowUnlock.*',
  '(SpinLockHolder::)?~SpinLockHolder.*',
].join('|');

function isProfileType(p: LProfile, types: string[][]): boolean {
  return types.some((t) => t.length === p.sampleTypes.length && t.every((x, i) => p.sampleTypes[i]!.type === x));
}

export function addLegacyFrameInfo(p: LProfile): void {
  if (isProfileType(p, heapzSampleTypes)) {
    p.dropFrames = ALLOC_DROP_FRAMES;
    p.keepFrames = ALLOC_KEEP_FRAMES;
  } else if (isProfileType(p, contentionzSampleTypes)) {
    p.dropFrames = LOCK_DROP_FRAMES;
    p.keepFrames = '';
  } else {
    p.dropFrames = CPU_DROP_FRAMES;
    p.keepFrames = '';
  }
}

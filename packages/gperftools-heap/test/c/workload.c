/*
 * A small program for the gperftools interop test: it allocates through a few distinct call
 * paths (some memory is freed, some kept), dumps the heap profile twice, and burns CPU in two
 * functions so the CPU profiler records samples. Built with -ltcmalloc_and_profiler and run with
 * HEAPPROFILE / CPUPROFILE set by the test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gperftools/heap-profiler.h>

static void *keep[4096];
static int nkeep;

__attribute__((noinline)) static void *alloc_small(size_t n) { return malloc(n); }
__attribute__((noinline)) static void *alloc_big(size_t n) { return calloc(1, n); }

__attribute__((noinline)) static void path_a(int i) {
  void *p = alloc_small(64 + (i % 7) * 16);
  memset(p, 1, 64);
  if (i % 3 == 0) free(p); else if (nkeep < 4096) keep[nkeep++] = p;
}

__attribute__((noinline)) static void path_b(int i) {
  void *p = alloc_big(8192 + (i % 5) * 1024);
  if (i % 2 == 0) free(p); else if (nkeep < 4096) keep[nkeep++] = p;
}

__attribute__((noinline)) static double spin_a(long n) {
  double x = 0;
  for (long i = 0; i < n; i++) x += (double)(i % 13) * 0.5;
  return x;
}

__attribute__((noinline)) static double spin_b(long n) {
  double x = 1;
  for (long i = 0; i < n; i++) x = x * 1.0000001 + (double)(i & 7);
  return x;
}

int main(int argc, char **argv) {
  long work = argc > 1 ? atol(argv[1]) : 60000000L;
  for (int i = 0; i < 3000; i++) path_a(i);
  if (IsHeapProfilerRunning()) HeapProfilerDump("after path_a");
  for (int i = 0; i < 600; i++) path_b(i);
  if (IsHeapProfilerRunning()) HeapProfilerDump("after path_b");
  double r = spin_a(work) + spin_b(work / 2);
  printf("%d %g\n", nkeep, r > 0 ? 1.0 : 0.0);
  return 0;
}

// tcmalloc's own text writers for the interop test: MallocExtension::GetHeapSample (heap_v2/R,
// one row per sampled object; with sampling off it writes %warn lines first) and
// GetHeapGrowthStacks (growth). Writes them to argv[1] and argv[2]. Build with -ltcmalloc.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <gperftools/malloc_extension.h>

static void* keep[20000];
static int nkeep = 0;

__attribute__((noinline)) static void* grow_a(size_t n) { return malloc(n); }
__attribute__((noinline)) static void* grow_b(size_t n) { return operator new(n); }

static void save(const char* path, const std::string& s) {
  FILE* f = fopen(path, "w");
  if (!f) { perror(path); exit(1); }
  fwrite(s.data(), 1, s.size(), f);
  fclose(f);
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  for (int i = 0; i < 20000; i++) keep[nkeep++] = (i % 2) ? grow_a(1024 + (i % 9) * 512) : grow_b(4096 + (i % 5) * 4096);
  std::string heap, growth;
  MallocExtension::instance()->GetHeapSample(&heap);
  MallocExtension::instance()->GetHeapGrowthStacks(&growth);
  save(argv[1], heap);
  save(argv[2], growth);
  printf("%d\n", nkeep);
  return 0;
}

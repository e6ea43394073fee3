// Writes Go's legacy text profiles (debug=1) for the interop test: heap ("heap profile: … @
// heap/<2·MemProfileRate>"), goroutine and threadcreate counts, and mutex contention
// ("--- mutex:"). Usage: go run golegacy.go OUTDIR
package main

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

var keep [][]byte

//go:noinline
func allocSmall(n int) []byte { return make([]byte, n) }

//go:noinline
func allocBig(n int) []byte { return make([]byte, n) }

func main() {
	dir := os.Args[1]
	runtime.MemProfileRate = 4096
	runtime.SetMutexProfileFraction(1)
	for i := 0; i < 2000; i++ {
		b := allocSmall(512 + i%7*64)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
	for i := 0; i < 200; i++ {
		keep = append(keep, allocBig(64<<10))
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				mu.Lock()
				time.Sleep(10 * time.Microsecond)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	runtime.GC()
	for _, name := range []string{"heap", "goroutine", "threadcreate", "mutex"} {
		f, err := os.Create(filepath.Join(dir, name+".txt"))
		if err != nil {
			panic(err)
		}
		if err := pprof.Lookup(name).WriteTo(f, 1); err != nil {
			panic(err)
		}
		f.Close()
	}
	runtime.KeepAlive(keep)
}

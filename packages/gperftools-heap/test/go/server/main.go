// A tiny program serving Go's net/http/pprof on 127.0.0.1 for profkit's remote-protocol tests.
// It prints "listening on http://127.0.0.1:PORT" once it accepts connections, burns some CPU and
// keeps some allocations alive so the profiles have samples, and exits by itself after -exit-after.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"runtime"
	"time"
)

var sink [][]byte

//go:noinline
func profkitTestAllocate(n int) {
	for i := 0; i < n; i++ {
		sink = append(sink, make([]byte, 64<<10))
	}
}

//go:noinline
func profkitTestSpin(until time.Time) uint64 {
	var x uint64 = 1
	for time.Now().Before(until) {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

func main() {
	exitAfter := flag.Duration("exit-after", 20*time.Second, "exit after this long")
	flag.Parse()
	runtime.MemProfileRate = 1 // every allocation: no first sampling interval can skip the buffers below
	profkitTestAllocate(64)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	time.AfterFunc(*exitAfter, func() { os.Exit(0) })
	go func() {
		for {
			profkitTestSpin(time.Now().Add(50 * time.Millisecond))
			time.Sleep(time.Millisecond)
		}
	}()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

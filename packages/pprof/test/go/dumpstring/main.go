// dumpstring: prints google/pprof's Profile.String() of a profile, or writes Go's raw
// (uncompressed) encoding of it. Test helper of @profkit/pprof, built by the tests with the
// Debian package golang-github-google-pprof-dev (GOPATH mode, no modules).
//   dumpstring string FILE      print p.String()
//   dumpstring raw FILE OUT     parse FILE, write p.WriteUncompressed to OUT
//   dumpstring merge FILE OUT   parse FILE, write profile.Merge([p]) uncompressed to OUT
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/google/pprof/profile"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: dumpstring string FILE | dumpstring raw|merge FILE OUT")
		os.Exit(2)
	}
	b, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	p, err := profile.Parse(bytes.NewReader(b))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	switch os.Args[1] {
	case "string":
		fmt.Print(p.String())
	case "raw", "merge":
		if os.Args[1] == "merge" {
			if p, err = profile.Merge([]*profile.Profile{p}); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		f, err := os.Create(os.Args[3])
		if err == nil {
			err = p.WriteUncompressed(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown command", os.Args[1])
		os.Exit(2)
	}
}

// A Go program that CPU-profiles itself with runtime/pprof, so that the
// tests can check that recce reads a pprof file it did not write itself.
//
//	go run main.go OUT.pprof [SECONDS]
//
// Nearly all of the time goes to burnGoCPU, which the report must name.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func burnGoCPU(seed uint64, n int) uint64 {
	h := seed
	for i := 0; i < n; i++ {
		h = (h^uint64(i))*0x100000001b3 + (h >> 29)
	}
	return h
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: main OUT.pprof [SECONDS]")
		os.Exit(2)
	}
	seconds := 1.0
	if len(os.Args) > 2 {
		s, err := strconv.ParseFloat(os.Args[2], 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		seconds = s
	}
	f, err := os.Create(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	for time.Now().Before(end) {
		sink += burnGoCPU(sink, 1000000)
	}
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

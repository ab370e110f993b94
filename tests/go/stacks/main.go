// A Go program whose stacks are known by construction, for the tests of
// recce's unwinding of Go code: the main goroutine runs
// main.main -> outer -> middle -> leafSpin, a worker goroutine runs
// worker -> middle -> leafSpin, and leafSpin is a leaf with no frame of
// its own (no frame pointer pushed, nothing on the stack but its return
// address), where a frame-pointer walk loses its caller. outer and middle
// have frames of different sizes. A third goroutine, clockSpin, calls
// time.Now in a loop: time.now moves SP to the thread's stack to call the
// vDSO.
//
//	stacks SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func leafSpin(seed uint64, n int) uint64 {
	h := seed
	for i := 0; i < n; i++ {
		h = (h^uint64(i))*0x100000001b3 + (h >> 29)
	}
	return h
}

//go:noinline
func middle(seed uint64) uint64 {
	var pad [8]uint64
	for i := range pad {
		pad[i] = leafSpin(seed+uint64(i), 20000)
	}
	return pad[0] ^ pad[7]
}

//go:noinline
func outer(seed uint64) uint64 {
	var pad [64]uint64
	pad[seed%64] = middle(seed)
	return pad[seed%64]
}

//go:noinline
func worker(end time.Time, done chan<- uint64) {
	var h uint64
	for time.Now().Before(end) {
		h += middle(h)
	}
	done <- h
}

//go:noinline
func clockSpin(end time.Time, done chan<- uint64) {
	var n uint64
	for time.Now().Before(end) {
		n++
	}
	done <- n
}

func main() {
	seconds := 1.0
	if len(os.Args) > 1 {
		s, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		seconds = s
	}
	end := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	done := make(chan uint64)
	go worker(end, done)
	go clockSpin(end, done)
	for time.Now().Before(end) {
		sink += outer(sink)
	}
	sink += <-done + <-done
}

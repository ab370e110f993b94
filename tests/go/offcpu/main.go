// A Go program whose threads block in system calls, for the off-CPU tests
// of recce record: napGo sleeps in nanosleep, readGo reads a pipe that
// another goroutine fills every 13 ms. Both call the kernel directly, so
// each blocks its thread (not just its goroutine) where the stack says.
//
//	offcpu SECONDS
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

//go:noinline
func napGo() {
	ts := syscall.Timespec{Nsec: 10 * 1000 * 1000}
	syscall.Nanosleep(&ts, nil)
}

//go:noinline
func readGo(fd int) {
	buf := make([]byte, 1)
	syscall.Read(fd, buf)
}

func main() {
	seconds := 5.0
	if len(os.Args) > 1 {
		s, err := strconv.ParseFloat(os.Args[1], 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		seconds = s
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go func() {
		runtime.LockOSThread()
		for {
			napGo()
		}
	}()
	go func() {
		runtime.LockOSThread()
		for {
			readGo(p[0])
		}
	}()
	go func() {
		for {
			time.Sleep(13 * time.Millisecond)
			syscall.Write(p[1], []byte{'x'})
		}
	}()
	fmt.Println("ready")
	time.Sleep(time.Duration(seconds * float64(time.Second)))
}

// A Go program that writes librecce events through cgo, for
// tests/cli/events.t: GOROUTINES goroutines write EVENTS events "tick"
// each, inside a span "batch", on whatever OS threads the Go scheduler
// runs them; then "done" once. Prints "ready", then sleeps until killed.
// Built with CGO_CFLAGS=-I include and CGO_LDFLAGS=librecce.a.
package main

/*
#include <stdlib.h>
#include "recce.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// Names live as long as the program: librecce interns them by address.
var (
	tick  = C.CString("tick")
	batch = C.CString("batch")
	done  = C.CString("done")
)

func main() {
	goroutines, _ := strconv.Atoi(os.Args[1])
	events, _ := strconv.Atoi(os.Args[2])
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A span is a thread's: keep the goroutine on one.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			C.recce_span_begin(batch)
			for i := 0; i < events; i++ {
				C.recce_event(tick)
			}
			C.recce_span_end(batch)
		}()
	}
	wg.Wait()
	C.recce_event(done)
	fmt.Println("ready")
	for {
		time.Sleep(time.Hour)
	}
}

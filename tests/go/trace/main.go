// A Go target for the tests that recce trace --return never disturbs Go's
// runtime: G goroutines each call sortWork N times, and every call
// recurses deep enough (with large frames) to make the goroutine's stack
// grow and be copied while the traced call is in flight, which is when a
// changed return address would be found out.
//
//	trace N PAUSE_MS G
//
// Prints "go: calls=G*N sum=S" and exits 0 after a second pause. With
// PAUSE_MS "go", it prints "gotrace: ready" and waits for SIGUSR1 (sent
// once the tracer is in) instead of the first pause, and has no second.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

//go:noinline
func deep(n int) int {
	var pad [512]byte
	pad[n%512] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%512]&1)
}

//go:noinline
func sortWork(seed int) int {
	v := make([]int, 64)
	for i := range v {
		v[i] = (seed*7919 + i*104729) % 1000
	}
	sort.Ints(v)
	return v[0] + v[63] + deep(40+seed%20)
}

// warmUp keeps g goroutines busy at once for 50 ms, so that the runtime
// has made its threads before the tracer attaches: a tracer that follows
// new threads only from when it reads of them (perf uprobe events) then
// sees every call.
func warmUp(g int) {
	var wg sync.WaitGroup
	end := time.Now().Add(50 * time.Millisecond)
	for k := 0; k < g; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
			}
		}()
	}
	wg.Wait()
}

func main() {
	n, pause, g, wait := 100, 500, 4, false
	if len(os.Args) > 3 {
		n, _ = strconv.Atoi(os.Args[1])
		wait = os.Args[2] == "go"
		pause, _ = strconv.Atoi(os.Args[2])
		g, _ = strconv.Atoi(os.Args[3])
	}
	if wait {
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		warmUp(g)
		fmt.Println("gotrace: ready")
		<-usr1
	} else {
		time.Sleep(time.Duration(pause) * time.Millisecond)
	}
	var wg sync.WaitGroup
	sums := make([]int, g)
	for k := 0; k < g; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				sums[k] += sortWork(k*n + i)
				time.Sleep(2 * time.Millisecond)
			}
		}(k)
	}
	wg.Wait()
	sum := 0
	for _, s := range sums {
		sum += s
	}
	fmt.Printf("go: calls=%d sum=%d\n", g*n, sum)
	time.Sleep(time.Duration(pause) * time.Millisecond)
}

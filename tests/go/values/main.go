// A Go target for the tests that recce trace reads Go's arguments from
// the registers Go's ABI gives them: a string (pointer and length, two
// registers) is shown as its text, a slice (three registers) as unknown,
// and the arguments after each still exactly.
//
//	values N
//
// Prints "go: ready", waits for SIGUSR1, then for i = 0..N-1 calls
// parse(strconv.Itoa(i*7), 2) and sum([]int{i, 1}, i), prints
// "go: SUM" and exits.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

//go:noinline
func parse(s string, base int) int {
	v, _ := strconv.Atoi(s)
	return v * base
}

//go:noinline
func sum(xs []int, k int) int {
	t := k
	for _, x := range xs {
		t += x
	}
	return t
}

func main() {
	n := 10
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	fmt.Println("go: ready")
	<-c
	t := 0
	for i := 0; i < n; i++ {
		t += parse(strconv.Itoa(i*7), 2) + sum([]int{i, 1}, i)
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("go: %d\n", t)
}

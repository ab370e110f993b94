// A Go target for the tests that recce trace reads Go's arguments from
// the registers Go's ABI gives them: a string (pointer and length, two
// registers) is shown as its text, a slice (three registers) as unknown,
// and the arguments after each still exactly; and every result of a
// function that returns several, a string and an error among them.
//
//	values N
//
// Prints "go: ready", waits for SIGUSR1, then for i = 0..N-1 calls
// parse(strconv.Itoa(i*7), 2), sum([]int{i, 1}, i) and
// score("sI", i), prints "go: SUM" and exits.
package main

import (
	"errors"
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

// score returns four results in five registers: RAX, RBX, RCX and RDI
// (the string), RSI and R8 (the error).
//
//go:noinline
func score(label string, n int) (int, bool, string, error) {
	if n == 2 {
		return -n, false, "", errors.New("two")
	}
	return n * 3, n%2 == 0, label + "!", nil
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
		if s, _, _, err := score("s"+strconv.Itoa(i), i); err == nil {
			t += s
		}
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("go: %d\n", t)
}

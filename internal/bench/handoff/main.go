// Command handoff measures what it costs to move items from a C thread to
// Go: a crossing per item (C calls a Go export, as
// TRITONBACKEND_ResponseSend calls thostResponseSend) against a queue in C
// that a Go goroutine drains in batches, one crossing per batch (a
// mutex-guarded ring, and a lock-free single-producer ring). It prints
// wall time and process CPU time per item for each, over several rounds.
// A queue pays only if its CPU time per item is below the crossing's.
//
//	go run ./internal/bench/handoff
package main

/*
#include <stdlib.h>
#include "handoff.h"
*/
import "C"

import (
	"flag"
	"fmt"
	"syscall"
	"time"
	"unsafe"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs f, which moves n items, and prints its cost per item.
func measure(name string, n int, f func() (batches int)) {
	start, cpu := time.Now(), cpuTime()
	batches := f()
	wall, used := time.Since(start), cpuTime()-cpu
	fmt.Printf("%-14s %5.0f ns/item wall %5.0f ns/item CPU", name, float64(wall)/float64(n), float64(used)/float64(n))
	if batches > 0 {
		fmt.Printf(" %6.1f items/batch", float64(n)/float64(batches))
	}
	fmt.Println()
}

// drainAll drains a ring until its producer is done and returns how many
// batches it took.
func drainAll(drain func(*C.uintptr_t, C.long) C.long) int {
	const batch = 256
	buf := (*C.uintptr_t)(C.malloc(batch * C.sizeof_uintptr_t))
	defer C.free(unsafe.Pointer(buf))
	batches := 0
	for {
		k := drain(buf, batch)
		if k < 0 {
			break
		}
		batches++
		for _, v := range unsafe.Slice((*uintptr)(unsafe.Pointer(buf)), int(k)) {
			sum += v
		}
	}
	C.join_producer()
	return batches
}

func main() {
	n := flag.Int("n", 2_000_000, "items per measurement")
	rounds := flag.Int("rounds", 5, "rounds of the three")
	flag.Parse()
	for range *rounds {
		measure("crossing", *n, func() int { C.run_callbacks(C.long(*n)); return 0 })
		measure("mutex ring", *n, func() int {
			C.start_mutex_ring(C.long(*n))
			return drainAll(func(b *C.uintptr_t, m C.long) C.long { return C.drain_mutex_ring(b, m) })
		})
		measure("lock-free ring", *n, func() int {
			C.start_lockfree_ring(C.long(*n))
			return drainAll(func(b *C.uintptr_t, m C.long) C.long { return C.drain_lockfree_ring(b, m) })
		})
	}
}

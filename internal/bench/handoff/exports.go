package main

// The Go function the C producer calls once per item (handoff.c). cgo
// allows no C definitions in the preamble of a file with //export.

/*
#include <stdint.h>
*/
import "C"

var sum uintptr

//export goItem
func goItem(i C.uintptr_t) { sum += uintptr(i) }

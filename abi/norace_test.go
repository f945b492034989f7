//go:build !race

package abi_test

// raceEnabled says the tests run under the race detector.
const raceEnabled = false

//go:build race

package abi_test

// raceEnabled says the tests run under the race detector, which drops
// some of what is put in a sync.Pool at random: allocation counts of the
// pooled paths then vary from run to run.
const raceEnabled = true

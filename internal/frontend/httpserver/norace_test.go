//go:build !race

package httpserver_test

// raceEnabled says the tests run under the race detector.
const raceEnabled = false

//go:build race

package main

// raceEnabled makes the integration tests build the server with -race too.
const raceEnabled = true

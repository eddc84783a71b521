//go:build !race

package sidecartest

// RaceEnabled is set when the tests run with -race, whose shadow memory
// grows with the heap and is never returned to the OS.
const RaceEnabled = false

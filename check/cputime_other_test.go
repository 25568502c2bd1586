//go:build !unix

package check_test

// cpuTime is not measured here: the benchmarks then leave out their
// per-CPU-second figures.
func cpuTime() float64 { return 0 }

// Package bench runs the benchmarks behind `pulse bench`: the hot path
// (bench/hotpath, plus instruction counts from callgrind), the all-in
// overhead on simgraph (paired, order-alternated trials) and the reader's
// cost. Each writes CSV and a PNG plot and returns a summary table.
// Method: shared/reference/upstream-ros2_pulse.md §3.
package bench

import (
	"fmt"
	"math"
)

// MeanSEM returns the mean and the standard error of the mean.
func MeanSEM(xs []float64) (mean, sem float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	v /= float64(len(xs) - 1)
	return mean, math.Sqrt(v / float64(len(xs)))
}

// Paired returns mean ± SEM of b[i]-a[i].
func Paired(a, b []float64) (mean, sem float64) {
	d := make([]float64, 0, len(a))
	for i := range a {
		if i < len(b) {
			d = append(d, b[i]-a[i])
		}
	}
	return MeanSEM(d)
}

// Rotations returns the arm order of trial i: arms rotated by i, so every arm
// runs first, second, ... equally often and drift cancels.
func Rotations(arms []string, i int) []string {
	out := make([]string, len(arms))
	for k := range arms {
		out[k] = arms[(k+i)%len(arms)]
	}
	return out
}

// pm formats mean ± sem.
func pm(mean, sem float64, digits int) string {
	return fmt.Sprintf("%.*f ± %.*f", digits, mean, digits, sem)
}

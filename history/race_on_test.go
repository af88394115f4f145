//go:build race

package history

// raceDetector is true in a build with -race, whose instrumentation slows
// some code paths far more than others and so distorts timing ratios.
const raceDetector = true

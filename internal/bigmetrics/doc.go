// Package bigmetrics grows a captured /gateway/metrics answer to a given
// size, for the benchmarks and measurements of the memory a parse may take
// (a busy gateway answers tens of megabytes), and measures what that
// target is judged by (Bench). Only tests import it.
package bigmetrics

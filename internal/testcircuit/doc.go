// Package testcircuit holds the small circuits the proving packages' tests share.
// Unlike sdk/circuits (whose chain has exactly 2^k constraints), Chain can have
// any number of constraints, so tests exercise the padding to the FFT domain.
package testcircuit

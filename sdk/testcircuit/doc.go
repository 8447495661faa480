// Package testcircuit holds the small circuits the proving packages' tests share (the
// SDK's and the host's; a backend author's tests may use them too).
// Unlike sdk/circuits (whose chain has exactly 2^k constraints), Chain can have
// any number of constraints, so tests exercise the padding to the FFT domain.
// Beside them are the tests' shared steps and data: compiling an example
// circuit (Compile), random field vectors (RandomVector).
package testcircuit

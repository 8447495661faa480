// Package par runs a loop's iterations on every core: the one parallel loop
// the SDK's CPU-bound passes (the development keygen, the solver's compile)
// share.
package par

// Package circomtest locates the circom and snarkjs files of sdk/circom's
// testdata (made by its make.sh with circom2 and snarkjs) for the tests of any
// package, in this module or another: one place says where they are.
package circomtest

import (
	"path/filepath"
	"runtime"
)

// Path returns the path of the test file name (say
// "poseidonbits_bls12381.zkey"), from this source file's own location, so it
// holds whatever directory a test runs in.
func Path(name string) string {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		panic("circomtest: no caller information to find sdk/circom/testdata by")
	}
	return filepath.Join(filepath.Dir(self), "..", "testdata", name)
}

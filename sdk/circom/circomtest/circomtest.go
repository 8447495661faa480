// Package circomtest is what the tests of any package, in this module or another,
// need to work with circom and snarkjs: where the files of sdk/circom's testdata
// are (made by its make.sh with circom2 and snarkjs), the tools themselves
// (Snarkjs, Circom2, Circomlib: installed from npm when missing), and a powers of
// tau computed directly, far faster than snarkjs makes one (WritePtau; BENCHMARKS.md, "A powers of tau for tests"). One place says
// where each is and which version the tests run.
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

//go:build cuda

package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk/curve"
)

// bn254NTT is BN254's scalar field as the NTT tests take it, with
// gnark-crypto's bn254 fr/fft as the reference (gnarkDomain).
var bn254NTT = nttField[bn254fr.Element]{
	name:     "BN254",
	random:   bn254Scalars,
	one:      bn254FrOf(1),
	minusOne: bn254FrOf(-1),
	domain:   gnarkDomain(curve.BN254{}),
}

func bn254FrOf(v int64) bn254fr.Element {
	var e bn254fr.Element
	e.SetInt64(v)
	return e
}

// TestBN254NTTMatchesGnark checks the kernels instantiated for BN254's scalar
// field (ntt.cu, ZK_NTT_BN254) against gnark-crypto's bn254 fr/fft Domain at
// every size from 2^0 to 2^20 (2^12 with -short), every mode (both
// directions, both decimations, on the coset or not) and both radixes, on
// random and edge inputs; and the resident API (NTTDevice) against the host
// one.
func TestBN254NTTMatchesGnark(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(21, 22))
	largest := 20
	if testing.Short() {
		largest = 12
	}
	var logs []int
	for l := 0; l <= largest; l++ {
		logs = append(logs, l)
	}
	for _, radix := range []NTTRadix{NTTRadix2, NTTRadix4, NTTRadixDefault} {
		t.Logf("radix %d", radix)
		nttMatchesGnark(t, bn254NTT, rng, logs, radix)
	}
	t.Run("device", func(t *testing.T) { nttDeviceRoundTrip(t, bn254NTT, 23) })
}

// BenchmarkBN254NTT is BenchmarkNTT over BN254's scalar field, at 2^k for k
// in ZK_BENCH_NTT_LOGS (default BenchmarkNTT's sizes, 2^16 to 2^26), beside
// which scripts/gpu-run.sh's peers step runs sppark's nttbench-bn254 at the
// same sizes.
func BenchmarkBN254NTT(b *testing.B) {
	needDevice(b)
	for _, logN := range benchLogs(b, "ZK_BENCH_NTT_LOGS", []int{16, 18, 20, 22, 24, 25, 26}) {
		for _, m := range nttBenchModes {
			for _, radix := range []NTTRadix{NTTRadix2, NTTRadix4} {
				b.Run(fmt.Sprintf("%s/2^%d/r%d", m, logN, radix), func(b *testing.B) {
					benchNTT(b, bn254NTT, logN, m, radix)
				})
			}
		}
	}
}

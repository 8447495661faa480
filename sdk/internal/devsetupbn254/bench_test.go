package devsetupbn254

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	cs "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk/circuits"
)

// BenchmarkSetup compares Setup with gnark's BN254 groth16.Setup on chain circuits of
// 2^k constraints, same compiled circuit, same run; k is 12 and 14, or ZKHOST_BENCH_LOG.
// devsetup's BenchmarkSetup is the same on BLS12-381. Figures in BENCHMARKS.md.
func BenchmarkSetup(b *testing.B) {
	ks := []int{12, 14}
	if s := os.Getenv("ZKHOST_BENCH_LOG"); s != "" {
		k, err := strconv.Atoi(s)
		if err != nil || k < 2 || k > 26 {
			b.Fatalf("ZKHOST_BENCH_LOG=%q: want an integer in [2, 26]", s)
		}
		ks = []int{k}
	}
	for _, k := range ks {
		spec, err := circuits.Lookup("chain", map[string]int{"k": k})
		if err == nil {
			spec, err = spec.On(ecc.BN254)
		}
		if err != nil {
			b.Fatal(err)
		}
		ccs, err := spec.Compile()
		if err != nil {
			b.Fatal(err)
		}
		sys := ccs.(*cs.R1CS)
		for _, s := range []struct {
			name  string
			setup func() error
		}{
			{"devsetupbn254", func() error { _, _, err := Setup(context.Background(), sys); return err }},
			{"gnark", func() error { _, _, err := groth16.Setup(sys); return err }},
		} {
			b.Run(fmt.Sprintf("k=%d/%s", k, s.name), func(b *testing.B) {
				for b.Loop() {
					if err := s.setup(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

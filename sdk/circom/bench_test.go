package circom

import (
	"os"
	"testing"
)

// Benchmarks on the largest test circuit. Real circuits are far larger;
// these show the cost per constraint that such a circuit multiplies.

func BenchmarkParseR1CS(b *testing.B) {
	data, err := os.ReadFile(testdataPath("poseidonbits", "bn128", ".r1cs"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseR1CS(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	for _, prime := range testPrimes {
		b.Run(prime.name, func(b *testing.B) {
			cs := mustReadR1CS(b, "poseidonbits", prime.name)
			w := mustReadWitness(b, "poseidonbits", prime.name)
			for b.Loop() {
				if err := cs.Check(w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(cs.Constraints)), "ns/constraint")
		})
	}
}

// Package synthgnark is a ready-made synthesizer plugin for circuits written with
// gnark: it reads the circuit's constraint system from the file the host names
// (the key set's NAME.ccs), parses each partition's witness (gnark's
// witness.MarshalBinary, as clients submit it), solves it with gnark's solver
// and the hints its user registers, and writes W, A and B with
// sdk.WritePartition.
//
// A circuit whose solver needs hints the host does not know (a custom
// solver.Hint) is served by a main of a few lines:
//
//	func main() {
//		sdk.ServeSynthesizer(synthgnark.New(synthgnark.Options{
//			Name:   "cuberoot",
//			Solver: []solver.Option{solver.WithHints(cubeRoot)},
//		}))
//	}
//
// examples/hintsynth is such a synthesizer, in its own Go module.
package synthgnark

// Package synthgnark is a ready-made synthesizer plugin for circuits written with
// gnark, on BLS12-381 or BN254: it reads the circuit's constraint system from
// the file the host names (the key set's NAME.ccs) as gnark's R1CS of the curve
// the host says (CircuitRef.Curve, checked against the field in the file),
// parses each partition's witness (gnark's witness.MarshalBinary, as clients
// submit it) over that curve's field, solves it with the curve's solver
// (sdk/solve or sdk/solvebn254) and the hints its user registers, and writes
// W, A and B with sdk.WritePartition. The curve picks the solver when the
// circuit is loaded; the rest is one path, generic over the scalar type.
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

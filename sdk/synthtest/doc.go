// Package synthtest is the conformance suite for synthesizer plugins (the second
// plugin kind beside backends; see sdk.Synthesizer). Run launches a synthesizer
// binary over the host's transport (go-plugin, gRPC, AutoMTLS: the host's own
// plugins.Launch) and checks it against a key set of the circuit it solves, of
// BLS12-381 or BN254 (the key set says which; the checks are the same):
//
//   - Describe names it, speaks sdk.SynthAPIVersion and the circuit's curve, and
//     takes at least one partition at a time;
//   - LoadCircuit is idempotent, and refuses the same circuit ID with another
//     constraint system digest, and a circuit whose sizes are not its own;
//   - every valid witness gives a partition, written into a memfd made as the
//     host makes it (sdk/shm's Store.Output) and sealed as the host seals it
//     (Store.Adopt, refused while the synthesizer still maps it writable),
//     whose W carries the submitted public inputs and which satisfies
//     every constraint with A and B equal to the constraints' sides evaluated on
//     W (sdk/partcheck, which also refuses a partition of another curve than
//     the circuit's); the first and last are proved with sdk/refprover and
//     the proofs verified with gnark's groth16.Verify;
//   - bad requests get typed errors and leave the output all zeros: an unknown
//     circuit (ErrKeyNotLoaded), an empty, truncated or garbled witness, a
//     witness that does not satisfy the circuit, an output of the wrong size,
//     an output whose inode is another file's, an output the host removed
//     (ErrInvalidArgument); and the synthesizer keeps serving.
//
// A synthesizer's own test calls it:
//
//	func TestConformance(t *testing.T) {
//		synthtest.Run(t, synthtest.Config{
//			SynthesizerPath: bin, KeyDir: keys, Circuit: "rootchain-s64",
//			Witnesses: valid, Unsatisfiable: bad,
//		})
//	}
package synthtest

// Package sdktest is the conformance suite of the backend contract: a backend binary
// that passes Run behaves as the zkhost host expects.
//
// Run launches the binary over the host's transport (go-plugin with sdk.Handshake,
// gRPC, automatic mutual TLS: the host's own plugins.Launch), writes partitions
// the way the host does (sealed memfds, sdk/shm), makes keys the way the host does
// (sdk/circuit), and checks, each in its own subtest:
//
//   - Describe: a name, API version sdk.APIVersion among the versions, MaxInFlight ≥ 1,
//     BLS12-381 among the curves, an available device (otherwise Prove must be refused
//     with ErrUnavailable and the proving checks are skipped).
//   - LoadKey: idempotent for the same ID and digest, ErrInvalidArgument for the same
//     ID with another digest, a typed error for a missing key file.
//   - Prove: partitions of the example circuits chain and merkle (sdk/circuits,
//     keys made by sdk/circuit.Keygen), up to MaxInFlight at once, every proof checked
//     with gnark's groth16.Verify against the circuit's verifying key.
//   - BadRequests: an unsealed partition file (ErrUnsealed), a wrong inode, size,
//     offset, curve, path, key or circuit each get their typed error, and the backend
//     proves correctly afterwards.
//   - BN254: a backend that declares BN254 among its curves proves a BN254 chain
//     circuit's partitions (a key set imported from gnark's files, as a user imports
//     one), every proof checked with gnark's BN254 verifier, and refuses a BN254
//     partition asked of a BLS12-381 key; one that does not declare it refuses the key
//     or its partitions with a typed error, so the host proves them elsewhere.
//   - Cancel: a Prove of a larger chain circuit, sized from the backend's measured
//     speed to take about Config.CancelTarget, cancelled at an eighth of its time
//     returns ErrCanceled, and the backend stops working on it: the next Prove is not
//     held up by the remaining work (best of three tries, since a loaded machine can
//     stall one) and the process goes idle. It passes or fails; it never skips.
//
// A backend's own test calls it:
//
//	func TestConformance(t *testing.T) {
//		sdktest.Run(t, sdktest.Config{BackendPath: pathToBinary, KeyDir: keyCache})
//	}
//
// Keys missing from KeyDir are generated with a development setup (seconds for the
// default sizes, longer for the cancelled proof's); the default KeyDir is kept between
// runs, so that is paid once.
package sdktest

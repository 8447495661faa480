// Package circuit is a circuit's key set as the host, synthesizers and the SDK's
// conformance suites see it: the files a circuit's keys live in, generating them
// (Keygen) or importing a user's gnark files (Import), loading them (Load), writing and
// reading witnesses and wire assignments, and synthesis (Synthesize: solving the R1CS for
// one partition's witness; Evaluate: A and B from a wire assignment solved elsewhere,
// every constraint checked). It is in the SDK because sdktest and synthtest make and
// load keys the way the host does; a backend does not import it (it reads NAME.pk with
// sdk/keyfile), so a backend binary does not link gnark.
//
// A circuit NAME in a key directory is four files:
//
//	NAME.ccs   gnark constraint system (R1CS.WriteTo), BLS12-381 or BN254
//	NAME.vk    gnark Groth16 verifying key (VerifyingKey.WriteTo)
//	NAME.pk    proving key in zkhost's key file format (sdk/keyfile, docs/keyfile.md)
//	NAME.json  metadata: circuit and parameters, sizes, and the digests of the other three
//
// NAME is the circuit's ID from sdk/circuits ("chain-k16", "merkle-d16-k4") for keys
// Keygen made, and the name the user chose for keys Import made. Keys converted from
// gnark files (keyconv.Convert) work without NAME.json; Load then checks the three files
// against each other only.
//
// Circuits with commitments (gnark's Commit API) are refused everywhere: zkhost's proving
// split and key format have no place for Pedersen commitments.
package circuit

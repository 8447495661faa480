// Package finalize checks every proof a backend returns before the host counts it.
//
// A backend is a separate process on a device the host does not trust to be right:
// a faulty GPU, a buggy third-party kernel or a fault-injecting test backend can all
// return bytes that look like a proof. The host verifies each partition proof with
// gnark's groth16.Verify against the circuit's verifying key and the partition's
// public witness (milliseconds), so a bad device costs a retry, never a wrong proof
// in a client's hands.
package finalize

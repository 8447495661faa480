// Package partcheck checks a solved partition against its circuit: that W's
// public inputs are the ones the client submitted, and that W satisfies every
// R1CS constraint with A and B equal to each constraint's left and right sides
// evaluated on W.
//
// The circuit is gnark's R1CS of BLS12-381 or BN254. Check and Public are one
// code path with the curve's scalar (its fr.Element) as a type parameter;
// CheckPartition dispatches on the constraint system's curve and refuses a
// partition of the other curve, naming both, before it reads a constraint.
//
// The host runs it when a proof made from a synthesizer plugin's partition does
// not verify, to tell a synthesizer that lied (wrote a partition that does not
// satisfy the circuit) from a device that failed; sdk/synthtest runs it on every
// partition a synthesizer writes. Its cost is one pass over the constraint
// system's terms (one multiplication and addition per term), far below a proof's.
package partcheck

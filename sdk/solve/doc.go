// Package solve solves a gnark BLS12-381 R1CS for one witness, as gnark's
// cs.R1CS.Solve does, and returns the same wire values W and the same
// constraint evaluations A and B, word for word, faster.
//
// gnark's solver interprets its compressed instructions anew for every
// witness: it decompresses each constraint into scratch slices, asks for every
// term whether its wire is solved yet, multiplies every coefficient that is not
// 0, 1, 2 or -1, converts every hint's inputs and outputs through big.Int, and
// keeps a third vector C that a Groth16 prover does not need. On the circuits
// people prove most of those costs are spent on nothing: in a SHA-256 or a bit
// decomposition nearly every wire is 0 or 1, the coefficients of a bit
// recomposition are powers of two, and the hint that decomposes a value into
// bits (gnark's std/math/bits nBits) runs once for every 32 wires.
//
// Compile walks the system once per circuit, in gnark's level order, and works
// out what does not depend on the witness: which term of each constraint is
// the one it solves (or none), so that no solved-flags are kept or checked at
// run time; which instructions are hints; where each level starts. The
// program refers to gnark's own calldata, so it costs a few bytes per
// constraint beside the system. Solve then runs it. Beside each wire's value
// it keeps the value as an int32 when it is a small integer, so a term whose
// coefficient and wire are both small (nearly every term of a bit-heavy
// circuit) is an integer product summed without a branch on its value, and a
// constraint made only of such terms is checked and solved in integers, with
// exact divisions only. A constraint x·x sums x once and squares it. The bit
// decomposition hint runs natively, every other hint (gnark's own, or a
// user's, passed as solver options exactly as to gnark) is called as gnark
// calls it, and wide levels run in parallel. SolveCompact also returns W's
// compact bitmaps, read from those integers.
//
// A system Compile cannot prove it handles exactly as gnark does (commitments,
// GKR, blueprints other than gnark's generic R1C and hint, a constraint with
// more than one unsolved wire, wires left unsolved) is refused with
// ErrUnsupported; callers then use gnark's Solve. A witness that does not
// satisfy a constraint is an *UnsatisfiedError naming the constraint; gnark's
// own message, with its debug information, comes from running gnark's solver
// on the same witness, which callers do on that rare path.
package solve

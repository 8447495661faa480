// Package constraints holds a rank-1 constraint system's matrices in
// compressed sparse rows: for every constraint i, the terms of its linear
// expressions L_i, R_i and O_i (a wire and a coefficient each), so that a
// backend can evaluate A = L·W, B = R·W and C = O·W itself from a witness W.
//
// Why a backend wants them: a partition then needs to carry only W, and a
// real witness is mostly 0s and 1s (sdk.CompactW packs it in about two bits a
// wire), where A and B cost 64 bytes a constraint to write, copy and upload.
// A backend that evaluates A, B and C also checks every constraint of the
// witness (A_i·B_i = C_i) on the way.
//
// The package uses gnark-crypto only, so a backend links no gnark; the host
// builds Matrices from gnark's compiled system with sdk/keyconv.Constraints.
package constraints

package solve

// BN254's solver, sdk/solvebn254, is this package on the other curve.
//go:generate ./gen.sh

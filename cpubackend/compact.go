package cpubackend

import (
	"errors"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/keyreg"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// takeConstraints reads the circuit's constraints the host sent with key id
// (sdk.OpenConstraints checks every index) and copies them into this
// process's memory, so that the host's file is mapped only while the key
// loads.
func takeConstraints(h sdk.ConstraintsHandle, f *keyfile.File, id string) (*constraints.Matrices, error) {
	m, closeFn, err := sdk.OpenConstraints(h)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	if err := keyreg.CheckConstraints(f, m, id); err != nil {
		return nil, err
	}
	return m.Clone(), nil
}

// expand turns compact partition h (W alone) into a full one in the
// backend's own store (shm.Store.WriteRaw: W expanded and A and B evaluated
// in the memfd's memory, no vectors of their own), A and B from the key's
// constraints on every core, every constraint checked, over the key's
// curve's field (checked to be the partition's). A W that breaks one is
// refused, naming it. The caller removes the full partition.
func (b *Backend) expand(k *loadedKey, h sdk.PartitionHandle, id string) (sdk.PartitionHandle, error) {
	if err := keyreg.CheckCompactPartition(k.file, h, id, k.matrices.NbConstraints()); err != nil {
		return sdk.PartitionHandle{}, err
	}
	switch h.Curve {
	case sdk.CurveBN254:
		return expandAs[bnfr.Element](b, k.matrices, h)
	case sdk.CurveBLS12381:
		return expandAs[blsfr.Element](b, k.matrices, h)
	}
	return sdk.PartitionHandle{}, sdk.Errorf(sdk.ErrUnimplemented, "prove: compact partitions of curve %q", h.Curve)
}

// expandAs is expand on the scalars S of the partition's curve.
func expandAs[S ~[4]uint64, PS curve.Scalar[S]](b *Backend, m *constraints.Matrices, h sdk.PartitionHandle) (sdk.PartitionHandle, error) {
	words := sdk.CompactWords(h.NbWires)
	other, bits, values := make([]uint64, words), make([]uint64, words), make([]S, h.NbOther)
	if err := sdk.ReadCompactPartition(h, other, bits, values, b.threads); err != nil {
		return sdk.PartitionHandle{}, err
	}
	// Expanded and evaluated straight into the full partition's memory.
	var bad int
	full, err := b.store.WriteRaw("expanded", h.Curve, h.NbWires, h.NbConstraints, func(W, A, B []byte) error {
		w, err1 := refprover.ScalarsOf[S](W)
		a, err2 := refprover.ScalarsOf[S](A)
		bv, err3 := refprover.ScalarsOf[S](B)
		if err := errors.Join(err1, err2, err3); err != nil {
			return sdk.Errorf(sdk.ErrInternal, "%v", err)
		}
		if err := sdk.ExpandW[S, PS](other, bits, values, w); err != nil {
			return err
		}
		bad = constraints.EvalParallel[S, PS](m, w, a, bv, b.threads)
		return nil
	})
	switch {
	case err != nil && sdk.KindOf(err) != sdk.ErrInternal:
		return sdk.PartitionHandle{}, err // ExpandW's refusal of the file
	case err != nil:
		return sdk.PartitionHandle{}, sdk.Errorf(sdk.ErrResourceExhausted, "prove: writing the full partition of a compact one: %v", err)
	case bad >= 0:
		b.store.Remove(full)
		return sdk.PartitionHandle{}, sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition's W does not satisfy constraint %d", bad)
	}
	return full, nil
}

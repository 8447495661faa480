package cpubackend

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/keyreg"
)

// takeConstraints reads the circuit's constraints the host sent with key id
// (sdk.OpenConstraints checks every index) and copies them into this
// process's memory, so that the host's file is mapped only while the key
// loads.
func takeConstraints(h sdk.ConstraintsHandle, pk *keyfile.ProvingKey, id string) (*constraints.Matrices, error) {
	m, closeFn, err := sdk.OpenConstraints(h)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	if m.NbWires != pk.NbWires || m.NbConstraints() > pk.DomainSize {
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: its constraints have %d wires and %d rows, the key %d wires and a domain of %d",
			id, m.NbWires, m.NbConstraints(), pk.NbWires, pk.DomainSize)
	}
	c := &constraints.Matrices{NbWires: m.NbWires, Coefficients: append([]fr.Element(nil), m.Coefficients...)}
	for i, x := range []*constraints.Matrix{&m.A, &m.B, &m.C} {
		dst := []*constraints.Matrix{&c.A, &c.B, &c.C}[i]
		dst.Start = append([]uint32(nil), x.Start...)
		dst.Wire = append([]uint32(nil), x.Wire...)
		dst.Coeff = append([]uint32(nil), x.Coeff...)
	}
	return c, nil
}

// expand turns compact partition h (W alone) into a full one in the
// backend's own store: W expanded, A and B evaluated from the key's
// constraints on every core, every constraint checked. A W that breaks one
// is refused, naming it. The caller removes the full partition.
func (b *Backend) expand(k *loadedKey, h sdk.PartitionHandle, id string) (sdk.PartitionHandle, error) {
	pk := k.file.Key()
	if err := keyreg.CheckCompactPartition(pk, h, id, k.matrices.NbConstraints()); err != nil {
		return sdk.PartitionHandle{}, err
	}
	words := sdk.CompactWords(h.NbWires)
	other, bits, values := make([]uint64, words), make([]uint64, words), make([]fr.Element, h.NbOther)
	if err := sdk.ReadCompactPartition(h, other, bits, values, b.threads); err != nil {
		return sdk.PartitionHandle{}, err
	}
	w := make([]fr.Element, h.NbWires)
	if err := sdk.ExpandW(other, bits, values, w); err != nil {
		return sdk.PartitionHandle{}, err
	}
	n := h.NbConstraints
	a, bv := make([]fr.Element, n), make([]fr.Element, n)
	if bad := k.matrices.EvalParallel(w, a, bv, b.threads); bad >= 0 {
		return sdk.PartitionHandle{}, sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition's W does not satisfy constraint %d", bad)
	}
	full, err := b.store.Write("expanded", h.Curve, w, a, bv)
	if err != nil {
		return sdk.PartitionHandle{}, sdk.Errorf(sdk.ErrResourceExhausted, "prove: writing the full partition of a compact one: %v", err)
	}
	return full, nil
}

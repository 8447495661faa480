package keyreg

import (
	"errors"
	"io/fs"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// OpenKeyFile maps ref's key file and checks it the way LoadKey must: the header
// digest must be ref.Digest (ErrDigestMismatch) and every section must match the
// header (one SHA-256 pass over the file). A missing or malformed file is an
// ErrInvalidArgument naming it.
func OpenKeyFile(ref sdk.KeyRef) (*keyfile.File, error) {
	f, err := keyfile.Open(ref.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return nil, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: %v", ref.ID, err)
		}
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: not a valid key file: %v", ref.ID, err)
	}
	if got := f.HeaderDigest(); got != ref.Digest {
		f.Close()
		return nil, sdk.Errorf(sdk.ErrDigestMismatch, "load key %q: %s has header digest %x, the request says %x", ref.ID, ref.Path, got, ref.Digest)
	}
	if err := f.Verify(); err != nil {
		f.Close()
		return nil, sdk.Errorf(sdk.ErrDigestMismatch, "load key %q: %v", ref.ID, err)
	}
	return f, nil
}

// CheckPartition checks that partition h fits the proving key of f (named id): W, A
// and B (sdk.FormatFull: a compact partition is refused, for a backend that
// does not evaluate A and B itself), the same number of wires, and at least
// one constraint but no more than the key's domain, over the key's curve.
func CheckPartition(f *keyfile.File, h sdk.PartitionHandle, id string) error {
	if h.Format != sdk.FormatFull {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition is %s; this backend proves only full partitions (W, A and B) and did not say otherwise (Description.CompactW)", h.Format)
	}
	return checkCounts(f, h, id)
}

// CheckCompactPartition checks a compact partition (sdk.FormatCompactW) for a
// key whose backend took its constraints (rows of them, sdk.KeyInfo.CompactW):
// the same number of wires as f's key, and exactly the constraint system's rows.
func CheckCompactPartition(f *keyfile.File, h sdk.PartitionHandle, id string, rows uint64) error {
	if h.Format != sdk.FormatCompactW {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition is %s, not compact", h.Format)
	}
	if rows == 0 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: a compact partition for key %q, which was loaded without its constraints", id)
	}
	if h.NbConstraints != rows {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition has %d constraints, key %q's constraint system %d", h.NbConstraints, id, rows)
	}
	return checkCounts(f, h, id)
}

// CheckConstraints checks that a circuit's constraints m fit the key of f (named
// id): the key's wires, and no more rows than its domain.
func CheckConstraints(f *keyfile.File, m *constraints.Matrices, id string) error {
	pk := f.Header()
	if m.NbWires != pk.NbWires || m.NbConstraints() > pk.DomainSize {
		return sdk.Errorf(sdk.ErrInvalidArgument, "load key %q: its constraints have %d wires and %d rows, the key %d wires and a domain of %d",
			id, m.NbWires, m.NbConstraints(), pk.NbWires, pk.DomainSize)
	}
	return nil
}

func checkCounts(f *keyfile.File, h sdk.PartitionHandle, id string) error {
	pk := f.Header()
	if want := sdk.Curve(curve.Name(f.Curve())); h.Curve != want {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition is over %s, key %q over %s", h.Curve, id, want)
	}
	if h.NbWires != pk.NbWires {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition has %d wires, key %q has %d", h.NbWires, id, pk.NbWires)
	}
	if h.NbConstraints == 0 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition has no constraints (nb_constraints is 0)")
	}
	if h.NbConstraints > pk.DomainSize {
		return sdk.Errorf(sdk.ErrInvalidArgument, "prove: the partition has %d constraints, more than the domain size %d of key %q",
			h.NbConstraints, pk.DomainSize, id)
	}
	return nil
}

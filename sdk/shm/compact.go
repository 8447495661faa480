//go:build linux

package shm

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	zkcurve "github.com/zkhost/zkhost/sdk/curve"
)

// WriteCompact makes partition name from a solved W alone, packed
// (sdk.FormatCompactW, laid out by sdk.CompactLayout), for a backend that
// evaluates A and B from the circuit's constraints: about two bits a wire
// where a full partition is 32 bytes a wire and 64 a constraint. W's
// scalars S say the partition's curve (either curve's fr.Element; a 1 is its
// field's). It packs W with up to threads goroutines (its bitmaps, then its
// other values straight into the memfd's memory), seals it and returns its
// handle. On any error nothing is kept.
func WriteCompact[S ~[4]uint64, PS zkcurve.Scalar[S]](s *Store, name string, w []S, nbConstraints uint64, threads int) (sdk.PartitionHandle, error) {
	// One pass over W: the bitmaps, here, and the count that sizes the file;
	// then only the values that are neither 0 nor 1 are read again.
	words := sdk.CompactWords(uint64(len(w)))
	other, bits := make([]uint64, words), make([]uint64, words)
	nbOther, err := sdk.PackBitsOf[S, PS](w, other, bits, threads)
	if err != nil {
		return sdk.PartitionHandle{}, err
	}
	return WriteCompactBits(s, name, uint64(len(w)), nbConstraints, other, bits, nbOther, func(values []S) error {
		return sdk.GatherOther(w, other, values, threads)
	})
}

// WriteCompactBits makes compact partition name from W's bitmaps, already
// packed (sdk.CompactLayout: other marks the nbOther wires neither 0 nor 1,
// bits the 1s), and values, which writes those nbOther values, in wire order,
// straight into the memfd's memory: what a W that arrives packed (a compact
// wire assignment) needs, without unpacking it. The values' scalars S say
// the partition's curve (either curve's fr.Element). The bitmaps are checked
// as a backend checks them. On any error, values' included, nothing is kept.
func WriteCompactBits[S ~[4]uint64](s *Store, name string, nbWires, nbConstraints uint64, other, bits []uint64, nbOther uint64, values func([]S) error) (sdk.PartitionHandle, error) {
	id := zkcurve.ScalarIDOf[S]()
	if id == ecc.UNKNOWN {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: values of type %T are no curve's scalars", name, *new(S))
	}
	curve := sdk.Curve(zkcurve.Name(id))
	if nbWires == 0 || nbConstraints == 0 || nbWires > sdk.MaxPartitionElements || nbConstraints > sdk.MaxPartitionElements {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %d wires and %d constraints, want 1..%d each", name, nbWires, nbConstraints, uint64(sdk.MaxPartitionElements))
	}
	words := sdk.CompactWords(nbWires)
	if uint64(len(other)) != words || uint64(len(bits)) != words {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %q: %d wires need %d words per bitmap, got %d and %d", name, nbWires, words, len(other), len(bits))
	}
	if err := sdk.CheckCompactBits(nbWires, other, bits, nbOther); err != nil {
		return sdk.PartitionHandle{}, err
	}
	oOff, bOff, vOff, size := sdk.CompactLayout(nbWires, nbOther)
	h, err := s.newOutput(name, curve, sdk.PartitionHandle{
		Size: int64(size), Curve: curve, NbWires: nbWires, NbConstraints: nbConstraints,
		Format: sdk.FormatCompactW, NbOther: nbOther, OtherOffset: oOff, BitsOffset: bOff, ValuesOffset: vOff,
	})
	if err != nil {
		return sdk.PartitionHandle{}, err
	}
	err = s.mapOutput(h, func(mem []byte) error {
		copy(wordsAt(mem, oOff, words), other)
		copy(wordsAt(mem, bOff, words), bits)
		return values(elementsAt[S](mem, vOff, nbOther))
	})
	if err == nil {
		h, err = s.Adopt(h)
	}
	if err != nil {
		if rerr := s.Remove(h); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return sdk.PartitionHandle{}, err
	}
	return h, nil
}

// mapOutput allocates the whole of pending output h, maps it writable, runs
// fill over the mapping and unmaps it (so that Adopt can seal the file).
func (s *Store) mapOutput(h sdk.PartitionHandle, fill func(mem []byte) error) error {
	s.mu.Lock()
	o, ok := s.pending[h.Inode]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("shm: write %s: not a pending output of this store", h.Path)
	}
	return mapFile(o.f, h.Path, h.Size, fill)
}

// mapFile allocates size bytes of f (a memfd: so that running out of memory
// is an error here, ENOMEM or ENOSPC, never a fault inside fill), maps them
// writable, runs fill and unmaps them.
func mapFile(f *os.File, path string, size int64, fill func(mem []byte) error) error {
	fd := int(f.Fd())
	if err := unix.Fallocate(fd, 0, 0, size); err != nil {
		if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.ENOSPC) {
			return fmt.Errorf("shm: write %s: %d bytes do not fit in memory (or the memory cgroup's limit): %w", path, size, err)
		}
		return fmt.Errorf("shm: write %s: allocating: %w", path, err)
	}
	mem, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("shm: write %s: mapping: %w", path, err)
	}
	ferr := fill(mem)
	if err := unix.Munmap(mem); err != nil {
		return errors.Join(ferr, fmt.Errorf("shm: write %s: unmapping: %w", path, err))
	}
	return ferr
}

func wordsAt(mem []byte, off, n uint64) []uint64 {
	if n == 0 {
		return []uint64{}
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[off])), n)
}

func elementsAt[S any](mem []byte, off, n uint64) []S {
	if n == 0 {
		return []S{}
	}
	return unsafe.Slice((*S)(unsafe.Pointer(&mem[off])), n)
}

// Constraints is a circuit's constraint matrices in a sealed memfd, for the
// backends that evaluate A and B themselves (sdk.KeyRef.Constraints). Close
// it when no backend needs it any more: a backend maps it only while it loads
// a key.
type Constraints struct {
	f *os.File
	h sdk.ConstraintsHandle
}

// Handle is what LoadKey sends.
func (c *Constraints) Handle() sdk.ConstraintsHandle { return c.h }

// Size is the memory the file holds.
func (c *Constraints) Size() uint64 { return uint64(c.h.Size) }

// Close releases the file (its memory once no backend maps it).
func (c *Constraints) Close() error { return c.f.Close() }

// WriteConstraints writes m into a new sealed memfd laid out by
// sdk.ConstraintsLayout. It is not one of the store's partitions: the caller
// keeps it (and Closes it) for as long as keys of the circuit may be loaded.
func (s *Store) WriteConstraints(name string, m *constraints.Matrices) (*Constraints, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("shm: write constraints: bad name %q (want 1-128 of A-Z a-z 0-9 . _ -, not starting with . _ or -)", name)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("shm: write constraints %q: %w", name, err)
	}
	h := sdk.ConstraintsHandleFor(m)
	f, err := memfd("zkhost-" + name)
	if err != nil {
		return nil, fmt.Errorf("shm: write constraints %q: %w", name, err)
	}
	err = mapFile(f, "constraints "+name, h.Size, func(mem []byte) error {
		m.CopyTo(sdk.ViewConstraints(h, mem))
		return nil
	})
	if err == nil {
		_, err = unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals)
	}
	var st unix.Stat_t
	if err == nil {
		err = unix.Fstat(int(f.Fd()), &st)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("shm: write constraints %q: %w", name, err)
	}
	h.Inode = uint64(st.Ino)
	h.Path = s.path(f)
	return &Constraints{f: f, h: h}, nil
}

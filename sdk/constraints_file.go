package sdk

import (
	"errors"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk/constraints"
)

// ConstraintsHandle locates a circuit's constraint matrices
// (constraints.Matrices) in a sealed memfd the host made, laid out by
// ConstraintsLayout. The host sends it with LoadKey (KeyRef.Constraints) to a
// backend that proves compact partitions (Description.CompactW).
type ConstraintsHandle struct {
	// Path, Inode and Size name the file as PartitionHandle's do.
	Path  string
	Inode uint64
	Size  int64
	// NbConstraints and NbWires are the system's; NbCoefficients is the
	// length of its coefficient table; NbTerms counts the terms of A, B and
	// C.
	NbConstraints  uint64
	NbWires        uint64
	NbCoefficients uint64
	NbTerms        [3]uint64
}

// ConstraintsOffsets are the byte offsets of a constraints file's sections.
type ConstraintsOffsets struct {
	Coefficients uint64
	// Start, Wire and Coeff of A, B and C, in that order.
	Start, Wire, Coeff [3]uint64
}

// ConstraintsLayout returns the offsets of a constraints file's sections and
// its size: the coefficient table (32-byte elements), then for each of A, B
// and C its row starts (nbConstraints+1 uint32s), its terms' wires and their
// coefficient indexes (uint32s), each section on a PartitionAlign boundary.
func ConstraintsLayout(nbConstraints, nbCoefficients uint64, terms [3]uint64) (ConstraintsOffsets, uint64) {
	var o ConstraintsOffsets
	at := uint64(0)
	o.Coefficients = at
	at = alignUp(at + nbCoefficients*ElementSize)
	for m := range 3 {
		o.Start[m] = at
		at = alignUp(at + (nbConstraints+1)*4)
		o.Wire[m] = at
		at = alignUp(at + terms[m]*4)
		o.Coeff[m] = at
		at = alignUp(at + terms[m]*4)
	}
	return o, at
}

// ConstraintsHandleFor returns the handle of a constraints file holding m (Path and
// Inode left for the writer to fill).
func ConstraintsHandleFor(m *constraints.Matrices) ConstraintsHandle {
	h := ConstraintsHandle{
		NbConstraints:  m.NbConstraints(),
		NbWires:        m.NbWires,
		NbCoefficients: uint64(len(m.Coefficients)),
		NbTerms:        [3]uint64{uint64(m.A.Terms()), uint64(m.B.Terms()), uint64(m.C.Terms())},
	}
	_, size := ConstraintsLayout(h.NbConstraints, h.NbCoefficients, h.NbTerms)
	h.Size = int64(size)
	return h
}

// ViewConstraints returns the matrices stored in mem, a constraints file's
// bytes laid out for h, without copying: the slices alias mem.
func ViewConstraints(h ConstraintsHandle, mem []byte) *constraints.Matrices {
	o, _ := ConstraintsLayout(h.NbConstraints, h.NbCoefficients, h.NbTerms)
	u32 := func(off, n uint64) []uint32 {
		if n == 0 {
			return []uint32{}
		}
		return unsafe.Slice((*uint32)(unsafe.Pointer(&mem[off])), n)
	}
	m := &constraints.Matrices{NbWires: h.NbWires}
	if h.NbCoefficients > 0 {
		m.Coefficients = unsafe.Slice((*[4]uint64)(unsafe.Pointer(&mem[o.Coefficients])), h.NbCoefficients)
	}
	for i, x := range []*constraints.Matrix{&m.A, &m.B, &m.C} {
		x.Start = u32(o.Start[i], h.NbConstraints+1)
		x.Wire = u32(o.Wire[i], h.NbTerms[i])
		x.Coeff = u32(o.Coeff[i], h.NbTerms[i])
	}
	return m
}

// maxConstraintsFile bounds a constraints file (1 TiB), far above any real
// circuit, so the layout's arithmetic cannot overflow.
const maxConstraintsFile = 1 << 40

// OpenConstraints maps, read-only, the constraints file h names, after
// checking the handle (counts within bounds, the size ConstraintsLayout gives)
// and the file (regular, h's inode and size, sealed as a partition is), and
// checks the matrices themselves (constraints.Matrices.Check: every index in
// bounds). The matrices alias the mapping: call closeFn when done with them
// (a backend uploads them to its device, then closes). Errors are *Error,
// ErrInvalidArgument naming what is wrong.
func OpenConstraints(h ConstraintsHandle) (m *constraints.Matrices, closeFn func() error, err error) {
	if !filepath.IsAbs(h.Path) {
		return nil, nil, Errorf(ErrInvalidArgument, "constraints handle: path %q is not absolute", h.Path)
	}
	if h.NbConstraints == 0 || h.NbConstraints > MaxPartitionElements || h.NbWires == 0 || h.NbWires > MaxPartitionElements ||
		h.NbCoefficients > MaxPartitionElements {
		return nil, nil, Errorf(ErrInvalidArgument, "constraints handle: %d constraints, %d wires, %d coefficients: want 1..%d each (coefficients 0..)",
			h.NbConstraints, h.NbWires, h.NbCoefficients, uint64(MaxPartitionElements))
	}
	for i, n := range h.NbTerms {
		if n > constraints.MaxTerms {
			return nil, nil, Errorf(ErrInvalidArgument, "constraints handle: matrix %c has %d terms, at most %d", "ABC"[i], n, uint64(constraints.MaxTerms))
		}
	}
	_, size := ConstraintsLayout(h.NbConstraints, h.NbCoefficients, h.NbTerms)
	if size > maxConstraintsFile || h.Size < 0 || uint64(h.Size) != size {
		return nil, nil, Errorf(ErrInvalidArgument, "constraints handle: size is %d, want %d for its counts", h.Size, size)
	}
	f, err := openSealedFile("constraints file", h.Path, h.Inode, h.Size)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	mem, err := unix.Mmap(int(f.Fd()), 0, int(h.Size), unix.PROT_READ, mmapFlags)
	if err != nil {
		if errors.Is(err, unix.ENOMEM) {
			return nil, nil, Errorf(ErrResourceExhausted, "constraints file %s: mapping %d bytes: %v", h.Path, h.Size, err)
		}
		return nil, nil, Errorf(ErrInternal, "constraints file %s: mapping %d bytes: %v", h.Path, h.Size, err)
	}
	closeFn = func() error {
		if err := unix.Munmap(mem); err != nil {
			return Errorf(ErrInternal, "constraints file %s: unmapping: %v", h.Path, err)
		}
		return nil
	}
	m = ViewConstraints(h, mem)
	if err := m.Check(); err != nil {
		closeFn()
		return nil, nil, Errorf(ErrInvalidArgument, "constraints file %s: %v", h.Path, err)
	}
	return m, closeFn, nil
}

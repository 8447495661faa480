package sdk

import (
	"errors"
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// writeChunk is how much of a section WritePartition hands the kernel per call.
const writeChunk = 1 << 20

// WritePartition writes a solved partition into the memfd the host made for it,
// out (the output handle of a SynthesizeRequest): W at WOffset, A at AOffset, B
// at BOffset, leaving the padding between sections zero. It is what a
// synthesizer calls to answer Synthesize. S is the fr.Element of out.Curve
// (gnark-crypto's bls12-381/fr or bn254/fr): both are four words, so only their
// type tells the curves apart, and vectors of another curve's scalars are
// refused rather than written as numbers of the wrong field.
//
// The file is opened for writing, never created: it must exist (the host's
// /proc/<pid>/fd/<n>), be a regular file with out's inode and exactly out.Size
// bytes. It is written with write calls, never mapped, so no writable mapping
// outlives the call (the host seals the file once Synthesize answers, which a
// writable mapping would prevent). Errors are *Error: ErrInvalidArgument when
// the vectors' lengths differ from the handle's counts, the handle's layout is
// wrong, the vectors are another curve's scalars than the handle's, or the file
// is missing or not the one the handle names;
// ErrResourceExhausted when memory runs out; ErrInternal otherwise. On error
// the sections written are zeroed again (their memory freed), so nothing is
// left of the partition, and the host removes the file.
func WritePartition[S ~[4]uint64](out PartitionHandle, W, A, B []S) error {
	if err := checkHandle(out); err != nil {
		return err
	}
	if err := checkScalarCurve[S](out.Curve); err != nil {
		return Errorf(ErrInvalidArgument, "write partition %s: %v", out.Path, err)
	}
	switch {
	case uint64(len(W)) != out.NbWires:
		return Errorf(ErrInvalidArgument, "write partition %s: W has %d elements, the handle says %d wires", out.Path, len(W), out.NbWires)
	case uint64(len(A)) != out.NbConstraints:
		return Errorf(ErrInvalidArgument, "write partition %s: A has %d elements, the handle says %d constraints", out.Path, len(A), out.NbConstraints)
	case uint64(len(B)) != out.NbConstraints:
		return Errorf(ErrInvalidArgument, "write partition %s: B has %d elements, the handle says %d constraints", out.Path, len(B), out.NbConstraints)
	}
	// No O_NOFOLLOW: the host's /proc/<pid>/fd/<n> is a link by design; what
	// is opened is checked for itself below.
	f, err := os.OpenFile(out.Path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Errorf(ErrInvalidArgument, "write partition %s: no such file (the host's output is gone)", out.Path)
		}
		return Errorf(ErrInvalidArgument, "write partition %s: %v", out.Path, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Errorf(ErrInternal, "write partition %s: %v", out.Path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return Errorf(ErrInvalidArgument, "write partition %s: not a regular file (mode %#o)", out.Path, st.Mode)
	case uint64(st.Ino) != out.Inode:
		return Errorf(ErrInvalidArgument, "write partition %s: inode %d, the handle says %d (not the output it names)", out.Path, st.Ino, out.Inode)
	case st.Size != out.Size:
		return Errorf(ErrInvalidArgument, "write partition %s: has %d bytes, the handle says %d", out.Path, st.Size, out.Size)
	}
	if err := fillPartition(f, out, W, A, B); err != nil {
		clearFile(f, out.Size)
		if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.ENOMEM) {
			return Errorf(ErrResourceExhausted, "write partition %s: %d bytes do not fit in memory: %v", out.Path, out.Size, err)
		}
		return Errorf(ErrInternal, "write partition %s: %v", out.Path, err)
	}
	return nil
}

// fillPartition writes the three sections of h at their offsets into f, which
// has h's size already (its padding a hole that reads as zeros).
// Deliberately parallel to sdk/shm's fill: see why there.
func fillPartition[S ~[4]uint64](f *os.File, h PartitionHandle, W, A, B []S) error {
	for _, s := range []struct {
		off  uint64
		data []byte
	}{{h.WOffset, elementBytes(W)}, {h.AOffset, elementBytes(A)}, {h.BOffset, elementBytes(B)}} {
		for len(s.data) > 0 {
			n := min(len(s.data), writeChunk)
			if _, err := f.WriteAt(s.data[:n], int64(s.off)); err != nil {
				return err
			}
			s.data, s.off = s.data[n:], s.off+uint64(n)
		}
	}
	return nil
}

// elementBytes views field elements as their in-memory bytes, the partition
// format (32 bytes each, Montgomery form, little-endian limbs).
func elementBytes[S ~[4]uint64](v []S) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*ElementSize)
}

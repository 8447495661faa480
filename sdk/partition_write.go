package sdk

import (
	"errors"
	"io/fs"
	"os"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"
)

// writeChunk is how much of a section WritePartition hands the kernel per call.
const writeChunk = 1 << 20

// WritePartition writes a solved partition to the new file out.Path, laid out as
// out says (the layout PartitionLayout gives): W at WOffset, A at AOffset, B at
// BOffset, the padding between sections zero, the file out.Size bytes. It is
// what a synthesizer calls with the output handle of a SynthesizeRequest.
//
// The file is created with mode 0600 and must not exist (O_EXCL; a symbolic
// link is refused). Errors are *Error: ErrInvalidArgument when the vectors'
// lengths differ from the handle's counts, the handle's layout is wrong, or the
// file exists or cannot be created; ErrResourceExhausted when the file system
// is full; ErrInternal otherwise. On error nothing is left at out.Path.
func WritePartition(out PartitionHandle, W, A, B []fr.Element) error {
	if err := checkHandle(out); err != nil {
		return err
	}
	switch {
	case uint64(len(W)) != out.NbWires:
		return Errorf(ErrInvalidArgument, "write partition %s: W has %d elements, the handle says %d wires", out.Path, len(W), out.NbWires)
	case uint64(len(A)) != out.NbConstraints:
		return Errorf(ErrInvalidArgument, "write partition %s: A has %d elements, the handle says %d constraints", out.Path, len(A), out.NbConstraints)
	case uint64(len(B)) != out.NbConstraints:
		return Errorf(ErrInvalidArgument, "write partition %s: B has %d elements, the handle says %d constraints", out.Path, len(B), out.NbConstraints)
	}
	f, err := os.OpenFile(out.Path, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Errorf(ErrInvalidArgument, "write partition %s: the file already exists", out.Path)
		}
		return Errorf(ErrInvalidArgument, "write partition %s: %v", out.Path, err)
	}
	err = fillPartition(f, out, W, A, B)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(out.Path)
		if errors.Is(err, unix.ENOSPC) {
			return Errorf(ErrResourceExhausted, "write partition %s: %d bytes do not fit: %v", out.Path, out.Size, err)
		}
		return Errorf(ErrInternal, "write partition %s: %v", out.Path, err)
	}
	return nil
}

// fillPartition sizes f and writes the three sections at their offsets. The
// file is truncated to its size first, so the padding is a hole that reads as
// zeros and costs no memory on tmpfs.
func fillPartition(f *os.File, h PartitionHandle, W, A, B []fr.Element) error {
	if err := f.Truncate(h.Size); err != nil {
		return err
	}
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
func elementBytes(v []fr.Element) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*ElementSize)
}

//go:build linux

package shm

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
)

// WriteWith makes partition name as Write does, but lets fill write W, A and B
// straight into the partition's memory: slices of nbWires and nbConstraints
// elements over the memfd, mapped for the call. A solver that writes its
// results there saves the vectors of its own and the copy Write makes of them
// (a 2^22 partition is 400 MB). The memory is allocated before fill runs, so a
// machine out of memory is an error here (ENOMEM, ENOSPC: journal.IsNoSpace
// knows them), never a fault inside fill. fill's error is returned as it is;
// on any error nothing is kept.
//
// W, A and B are BLS12-381 scalars; WriteRaw gives any curve's as bytes.
func (s *Store) WriteWith(name string, curve sdk.Curve, nbWires, nbConstraints uint64, fill func(W, A, B []fr.Element) error) (sdk.PartitionHandle, error) {
	if curve != sdk.CurveBLS12381 {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: write %s: WriteWith's vectors are BLS12-381 scalars, the partition is %s (use WriteRaw)", name, curve)
	}
	view := func(b []byte) []fr.Element {
		return unsafe.Slice((*fr.Element)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/sdk.ElementSize)
	}
	return s.WriteRaw(name, curve, nbWires, nbConstraints, func(W, A, B []byte) error {
		return fill(view(W), view(A), view(B))
	})
}

// WriteRaw is WriteWith for a partition of any curve: fill gets W, A and B as
// the raw bytes of their scalars (sdk.ElementSize each, 8-byte aligned), to view
// as the curve's elements.
func (s *Store) WriteRaw(name string, curve sdk.Curve, nbWires, nbConstraints uint64, fill func(W, A, B []byte) error) (sdk.PartitionHandle, error) {
	h, err := s.Output(name, curve, nbWires, nbConstraints)
	if err != nil {
		return sdk.PartitionHandle{}, err
	}
	if err := s.fillOutput(h, fill); err != nil {
		if rerr := s.Remove(h); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return sdk.PartitionHandle{}, err
	}
	sealed, err := s.Adopt(h)
	if err != nil {
		if rerr := s.Remove(h); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return sdk.PartitionHandle{}, err
	}
	return sealed, nil
}

// fillOutput allocates the sections of pending output h, maps them and runs
// fill over them, and unmaps them (so that Adopt can seal the file).
func (s *Store) fillOutput(h sdk.PartitionHandle, fill func(W, A, B []byte) error) error {
	s.mu.Lock()
	o, ok := s.pending[h.Inode]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("shm: write %s: not a pending output of this store", h.Path)
	}
	fd := int(o.f.Fd())
	sections := []struct{ off, n uint64 }{{h.WOffset, h.NbWires}, {h.AOffset, h.NbConstraints}, {h.BOffset, h.NbConstraints}}
	for _, sec := range sections {
		if err := unix.Fallocate(fd, 0, int64(sec.off), int64(sec.n*sdk.ElementSize)); err != nil {
			if errors.Is(err, unix.ENOMEM) || errors.Is(err, unix.ENOSPC) {
				return fmt.Errorf("shm: write %s: %d bytes do not fit in memory (or the memory cgroup's limit): %w", h.Path, h.Size, err)
			}
			return fmt.Errorf("shm: write %s: allocating: %w", h.Path, err)
		}
	}
	mem, err := unix.Mmap(fd, 0, int(h.Size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("shm: write %s: mapping: %w", h.Path, err)
	}
	// Capped at each section's end, so an append in fill cannot reach the next.
	view := func(off, n uint64) []byte { return mem[off : off+n*sdk.ElementSize : off+n*sdk.ElementSize] }
	ferr := fill(view(h.WOffset, h.NbWires), view(h.AOffset, h.NbConstraints), view(h.BOffset, h.NbConstraints))
	if err := unix.Munmap(mem); err != nil {
		return errors.Join(ferr, fmt.Errorf("shm: write %s: unmapping: %w", h.Path, err))
	}
	return ferr
}

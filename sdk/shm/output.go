//go:build linux

package shm

import (
	"errors"
	"fmt"
	"math/bits"
	"os"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk"
	zkcurve "github.com/zkhost/zkhost/sdk/curve"
)

// A synthesizer plugin writes its partition into a memfd the host made:
// Output creates it at its final size, already sealed against growing and
// shrinking, and names it by the host's descriptor in /proc, which the
// synthesizer (the host's child, same user) opens for writing
// (sdk.WritePartition). Adopt then adds F_SEAL_WRITE and F_SEAL_SEAL: from
// then on the bytes are fixed, as those of a partition Write made, and the
// backend that proves it checks the same seals. The kernel refuses the write
// seal while any writable shared mapping of the memfd exists, so a
// synthesizer that still maps it for writing (and could change it under the
// backend) is refused at Adopt, not trusted.

// outputSeals are sealed at once by Output: the size is the layout's and stays
// so. sealsAtAdopt are added by Adopt, completing seals.
const (
	outputSeals  = unix.F_SEAL_GROW | unix.F_SEAL_SHRINK
	sealsAtAdopt = seals &^ outputSeals
)

// output is a memfd handed to a synthesizer and not yet adopted.
type output struct {
	f *os.File
	h sdk.PartitionHandle
}

// Output creates the memfd a synthesizer plugin writes partition name into:
// nbWires wires and nbConstraints constraints laid out by sdk.PartitionLayout,
// the size fixed (sealed against growing and shrinking), the contents zero. The
// handle it returns names it by the host's descriptor (/proc/<pid>/fd/<n>) and
// its inode. The output stays pending until Adopt or Remove (or Close).
func (s *Store) Output(name string, curve sdk.Curve, nbWires, nbConstraints uint64) (sdk.PartitionHandle, error) {
	if nbWires == 0 || nbConstraints == 0 || nbWires > sdk.MaxPartitionElements || nbConstraints > sdk.MaxPartitionElements {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: %d wires and %d constraints, want 1..%d each", name, nbWires, nbConstraints, uint64(sdk.MaxPartitionElements))
	}
	wOff, aOff, bOff, size := sdk.PartitionLayout(nbWires, nbConstraints)
	return s.newOutput(name, curve, sdk.PartitionHandle{
		Size: int64(size), Curve: curve, NbWires: nbWires, NbConstraints: nbConstraints,
		WOffset: wOff, AOffset: aOff, BOffset: bOff,
	})
}

// newOutput creates the memfd of pending output h (Output's, or a compact
// partition's): sized, sealed against growing and shrinking, zero, named by
// the host's descriptor and its inode in the handle it returns.
func (s *Store) newOutput(name string, curve sdk.Curve, h sdk.PartitionHandle) (sdk.PartitionHandle, error) {
	if !validName.MatchString(name) {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output: bad partition name %q (want 1-128 of A-Z a-z 0-9 . _ -, not starting with . _ or -)", name)
	}
	if curve != sdk.CurveBLS12381 && curve != sdk.CurveBN254 {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: unknown curve %q (want %s or %s)", name, curve, sdk.CurveBLS12381, sdk.CurveBN254)
	}
	if s.isClosed() {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: the store is closed", name)
	}
	f, err := memfd("zkhost-" + name)
	if err != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: %w", name, err)
	}
	// Truncate makes the whole file a hole: zeros that cost no memory until
	// the synthesizer writes them.
	if err := f.Truncate(h.Size); err != nil {
		f.Close()
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: sizing to %d bytes: %w", name, h.Size, err)
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, outputSeals); err != nil {
		f.Close()
		return sdk.PartitionHandle{}, fmt.Errorf("shm: output %q: sealing its size: %w", name, err)
	}
	err = s.keep("output", name, f, &h, func() { s.pending[h.Inode] = output{f: f, h: h} })
	if err != nil {
		return sdk.PartitionHandle{}, err
	}
	return h, nil
}

// Adopt takes in the output out (from Output) once its synthesizer has written
// it: it must be a pending output of this store, described exactly as Output
// described it. Adopt seals it against writes (and further seals) and returns
// its handle, now that of a partition like Write's, which Remove releases. It
// refuses an output that something still maps writable (the synthesizer did not
// unmap it). On error the output stays pending, for the caller to Remove.
func (s *Store) Adopt(out sdk.PartitionHandle) (sdk.PartitionHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: the store is closed", out.Path)
	}
	o, ok := s.pending[out.Inode]
	if !ok {
		if _, sealed := s.files[out.Inode]; sealed {
			return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: inode %d is adopted already", out.Path, out.Inode)
		}
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: inode %d is not an output of this store", out.Path, out.Inode)
	}
	if out != o.h {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt: handle %+v is not the output this store made (%+v)", out, o.h)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(o.f.Fd()), &st); err != nil {
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: %w", out.Path, err)
	}
	if st.Size != out.Size {
		// The size seals make this impossible; checked all the same.
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: has %d bytes, want %d", out.Path, st.Size, out.Size)
	}
	if _, err := unix.FcntlInt(o.f.Fd(), unix.F_ADD_SEALS, sealsAtAdopt); err != nil {
		if errors.Is(err, unix.EBUSY) {
			return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: the partition is still mapped writable (by the synthesizer, which must unmap it before it answers), so its bytes could still change: %w", out.Path, err)
		}
		return sdk.PartitionHandle{}, fmt.Errorf("shm: adopt %s: sealing: %w", out.Path, err)
	}
	delete(s.pending, out.Inode)
	s.files[out.Inode] = o.f
	return out, nil
}

// ReadW returns the first n elements of the wire vector of partition h, a
// BLS12-381 partition or pending output of this store (ReadWOf reads either
// curve's).
func (s *Store) ReadW(h sdk.PartitionHandle, n int) ([]fr.Element, error) {
	return ReadWOf[fr.Element](s, h, n)
}

// ReadWOf returns the first n elements of the wire vector of partition h, a
// partition or pending output of s, as scalars S of h's curve, read through
// the store's own descriptor (the constant wire and the public inputs, for a
// check against the submitted witness). A partition of another curve than
// S's is refused, naming both.
func ReadWOf[S ~[4]uint64, PS zkcurve.Scalar[S]](s *Store, h sdk.PartitionHandle, n int) ([]S, error) {
	if want := sdk.Curve(zkcurve.Name(zkcurve.ScalarIDOf[S]())); h.Curve != want {
		return nil, fmt.Errorf("shm: read W of %s: the partition is %s, read as %s scalars", h.Path, zkcurve.TitleOf(string(h.Curve)), zkcurve.TitleOf(string(want)))
	}
	if n < 0 || uint64(n) > h.NbWires {
		return nil, fmt.Errorf("shm: read W of %s: %d elements asked, it has %d", h.Path, n, h.NbWires)
	}
	s.mu.Lock()
	defer s.mu.Unlock() // held while reading, so Remove cannot close f meanwhile
	f, ok := s.files[h.Inode]
	if !ok {
		o, pending := s.pending[h.Inode]
		if !pending {
			return nil, fmt.Errorf("shm: read W of %s: inode %d is not a partition of this store", h.Path, h.Inode)
		}
		f = o.f
	}
	out := make([]S, n)
	if h.Format == sdk.FormatCompactW {
		if err := readCompactW[S, PS](f, h, out); err != nil {
			return nil, fmt.Errorf("shm: read W of %s: %w", h.Path, err)
		}
		return out, nil
	}
	if _, err := f.ReadAt(scalarBytesOf(out), int64(h.WOffset)); err != nil {
		return nil, fmt.Errorf("shm: read W of %s: %w", h.Path, err)
	}
	return out, nil
}

// readCompactW reads the first len(out) wires of compact partition h from f:
// the bitmaps' words that cover them, and the values of the others among them.
func readCompactW[S ~[4]uint64, PS zkcurve.Scalar[S]](f *os.File, h sdk.PartitionHandle, out []S) error {
	words := sdk.CompactWords(uint64(len(out)))
	other, bits := make([]uint64, words), make([]uint64, words)
	if _, err := f.ReadAt(wordBytesOf(other), int64(h.OtherOffset)); err != nil {
		return err
	}
	if _, err := f.ReadAt(wordBytesOf(bits), int64(h.BitsOffset)); err != nil {
		return err
	}
	// Only the first len(out) wires: clear the bits of the wires beyond.
	if tail := len(out) % 64; tail != 0 {
		other[words-1] &= 1<<tail - 1
		bits[words-1] &= 1<<tail - 1
	}
	var nbOther uint64
	for _, o := range other {
		nbOther += uint64(popcount(o))
	}
	if nbOther > h.NbOther {
		return fmt.Errorf("%d of its first %d wires are marked neither 0 nor 1, the handle says %d in all", nbOther, len(out), h.NbOther)
	}
	values := make([]S, nbOther)
	if _, err := f.ReadAt(scalarBytesOf(values), int64(h.ValuesOffset)); err != nil {
		return err
	}
	return sdk.ExpandW[S, PS](other, bits, values, out)
}

// scalarBytesOf views scalars as their bytes.
func scalarBytesOf[S ~[4]uint64](v []S) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*32)
}

func wordBytesOf(v []uint64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
}

func popcount(x uint64) int { return bits.OnesCount64(x) }

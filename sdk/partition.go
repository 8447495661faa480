package sdk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/sdk/curve"
)

// ElementSize is the size in bytes of one field element in a partition file: a
// scalar of BLS12-381 or BN254, four little-endian 64-bit limbs in Montgomery
// form (gnark-crypto's fr.Element in memory).
const ElementSize = 32

// PartitionAlign is the alignment of every section of a partition file and of
// its size. 4096 is the page size of every machine zkhost runs on, so each
// section can be mapped or pinned for DMA on its own.
const PartitionAlign = 4096

// MaxPartitionElements bounds NbWires and NbConstraints (2^40: 32 TiB per
// vector), far above any real circuit, so layout arithmetic cannot overflow.
const MaxPartitionElements = 1 << 40

// PartitionLayout returns the byte offsets of W, A and B in a partition file and
// the file's size: W (nbWires elements) first, then A and B (nbConstraints
// elements each), each section starting on a PartitionAlign boundary and the
// size rounded up to one. Inputs above MaxPartitionElements give meaningless
// results; OpenPartition refuses them first.
func PartitionLayout(nbWires, nbConstraints uint64) (wOff, aOff, bOff, size uint64) {
	wOff = 0
	aOff = alignUp(wOff + nbWires*ElementSize)
	bOff = alignUp(aOff + nbConstraints*ElementSize)
	size = alignUp(bOff + nbConstraints*ElementSize)
	return wOff, aOff, bOff, size
}

func alignUp(n uint64) uint64 {
	return (n + PartitionAlign - 1) &^ (PartitionAlign - 1)
}

// Section names one vector of a partition.
type Section int

// The sections of a partition, in file order.
const (
	SectionW Section = iota // the wire vector, NbWires elements
	SectionA                // A evaluated per constraint, NbConstraints elements
	SectionB                // B evaluated per constraint, NbConstraints elements
)

// String returns the section's name. Deliberately parallel to host/supervise's
// State.String: see why there.
func (s Section) String() string {
	switch s {
	case SectionW:
		return "W"
	case SectionA:
		return "A"
	case SectionB:
		return "B"
	}
	return fmt.Sprintf("section(%d)", int(s))
}

// Partition is a sealed partition file mapped read-only. Its slices alias the mapping:
// never write to them (the process would fault) and never use them after Close.
type Partition struct {
	h    PartitionHandle
	data []byte

	mu     sync.Mutex
	closed bool
}

// OpenPartition opens and maps, read-only, the partition h names, after checking
// everything the handle claims: a supported curve (BLS12-381 or BN254), counts within
// bounds, offsets and size equal to PartitionLayout's, an absolute path to a
// regular file of exactly h.Size bytes whose inode is h.Inode, and seals that
// forbid every change to the file's bytes (F_SEAL_WRITE, F_SEAL_SHRINK and
// F_SEAL_GROW, checked with F_GET_SEALS before mapping). Errors are *Error:
// ErrInvalidArgument naming the bad field or the file's problem, ErrUnimplemented
// for a known curve this SDK cannot view yet, and ErrUnsealed for a file that
// lacks a seal (its bytes could change under the backend).
//
// Nothing is read or hashed: the seals are the kernel's guarantee that the bytes
// are the host's, so opening costs a few system calls whatever the size.
func OpenPartition(h PartitionHandle) (*Partition, error) {
	f, err := openSealed(h)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	data, err := unix.Mmap(int(f.Fd()), 0, int(h.Size), unix.PROT_READ, mmapFlags)
	if err != nil {
		if errors.Is(err, unix.ENOMEM) {
			return nil, Errorf(ErrResourceExhausted, "partition file %s: mapping %d bytes: %v", h.Path, h.Size, err)
		}
		return nil, Errorf(ErrInternal, "partition file %s: mapping %d bytes: %v", h.Path, h.Size, err)
	}
	return &Partition{h: h, data: data}, nil
}

// openSealed opens the partition file h names after OpenPartition's checks of
// the handle, then of the file itself (openSealedFile).
func openSealed(h PartitionHandle) (*os.File, error) {
	if err := checkHandle(h); err != nil {
		return nil, err
	}
	return openSealedFile("partition file", h.Path, h.Inode, h.Size)
}

// openSealedFile opens path read-only and checks it is what the host said: a
// regular file with the given inode and size, carrying RequiredSeals. what
// names the file in errors ("partition file").
func openSealedFile(what, path string, inode uint64, size int64) (*os.File, error) {
	// No O_NOFOLLOW: the host's /proc/<pid>/fd/<n> is a link by design. What
	// is opened is then checked for itself: a regular file, the handle's inode,
	// sealed.
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(ErrInvalidArgument, "%s %s: no such file", what, path)
		}
		return nil, Errorf(ErrInvalidArgument, "%s %s: %v", what, path, err)
	}
	if err := checkFile(f, what, path, inode, size); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkFile checks the opened file f: a regular file with the given inode and
// size, carrying RequiredSeals.
func checkFile(f *os.File, what, path string, inode uint64, size int64) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return Errorf(ErrInternal, "%s %s: %v", what, path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return Errorf(ErrInvalidArgument, "%s %s: not a regular file (mode %#o)", what, path, st.Mode)
	}
	if uint64(st.Ino) != inode {
		return Errorf(ErrInvalidArgument, "%s %s: inode %d, the handle says %d (not the file it names)", what, path, st.Ino, inode)
	}
	if st.Size != size {
		return Errorf(ErrInvalidArgument, "%s %s: has %d bytes, the handle says %d", what, path, st.Size, size)
	}
	return checkSealed(f, what, path)
}

// readChunk is how many bytes one read of ReadPartition asks for (4 MiB).
const readChunk = 4 << 20

// ReadPartition reads the partition h names into w, a and b (its W, A and B:
// len(w) == NbWires, len(a) == len(b) == NbConstraints; S is the fr.Element of
// the partition's curve, whose bytes it holds), with up to threads
// reads at a time (one when threads is below 1), after OpenPartition's checks
// (and with its errors). A destination of the wrong length is the caller's
// bug: ErrInternal naming the vector, and nothing read.
//
// For a backend that copies the partition anyway (into pinned memory for DMA,
// say): the kernel copies each piece straight from the file's pages, where a
// copy out of OpenPartition's mapping first builds the mapping's page table,
// a fault every few pages. What that saves depends on the machine: much on a
// small VM, less on a large host, where it still shortens the CUDA backend's
// map phase (BENCHMARKS.md, "The partition read into the staging").
//
// Deliberately parallel to ReadCompactPartition: the steps they share are
// openSealed, checkDestinations and readPieces; what is left is each format's
// own sections and checks.
func ReadPartition[S ~[4]uint64](h PartitionHandle, w, a, b []S, threads int) error {
	if h.Format != FormatFull {
		return Errorf(ErrInvalidArgument, "partition file %s: format %s, not W, A and B (ReadCompactPartition reads it)", h.Path, h.Format)
	}
	f, err := openSealed(h)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := checkDestinations("ReadPartition", h.Path, []layoutField{
		{"W", uint64(len(w)), h.NbWires},
		{"A", uint64(len(a)), h.NbConstraints},
		{"B", uint64(len(b)), h.NbConstraints},
	}); err != nil {
		return err
	}
	var pieces []readPiece
	for _, sec := range []struct {
		v   []S
		off uint64
	}{{w, h.WOffset}, {a, h.AOffset}, {b, h.BOffset}} {
		pieces = appendPieces(pieces, elementBytes(sec.v), sec.off)
	}
	return readPieces(f, h.Path, pieces, threads)
}

// ReadCompactPartition reads the FormatCompactW partition h names into other,
// bits (CompactWords(NbWires) words each) and values (NbOther elements), with
// up to threads reads at a time, after OpenPartition's checks. It then checks
// what a device would trust: that the Other bits number exactly NbOther and
// that no bit lies beyond the last wire (ErrInvalidArgument otherwise). A
// destination of the wrong length is the caller's bug: ErrInternal.
// Deliberately parallel to ReadPartition: see why there.
func ReadCompactPartition[S ~[4]uint64](h PartitionHandle, other, bits []uint64, values []S, threads int) error {
	if h.Format != FormatCompactW {
		return Errorf(ErrInvalidArgument, "partition file %s: format %s, not a compact W", h.Path, h.Format)
	}
	f, err := openSealed(h)
	if err != nil {
		return err
	}
	defer f.Close()
	words := CompactWords(h.NbWires)
	if err := checkDestinations("ReadCompactPartition", h.Path, []layoutField{
		{"Other", uint64(len(other)), words},
		{"Bits", uint64(len(bits)), words},
		{"values", uint64(len(values)), h.NbOther},
	}); err != nil {
		return err
	}
	var pieces []readPiece
	pieces = appendPieces(pieces, wordBytes(other), h.OtherOffset)
	pieces = appendPieces(pieces, wordBytes(bits), h.BitsOffset)
	pieces = appendPieces(pieces, elementBytes(values), h.ValuesOffset)
	if err := readPieces(f, h.Path, pieces, threads); err != nil {
		return err
	}
	if err := CheckCompactBits(h.NbWires, other, bits, h.NbOther); err != nil {
		return Errorf(ErrInvalidArgument, "partition file %s: %v", h.Path, err)
	}
	return nil
}

// checkDestinations checks each destination's length (got) against the
// partition's (want): a wrong one is the caller's bug, ErrInternal naming it.
func checkDestinations(fn, path string, dests []layoutField) error {
	for _, d := range dests {
		if d.got != d.want {
			return Errorf(ErrInternal, "%s: %s's destination holds %d elements, the partition %s has %d", fn, d.name, d.got, path, d.want)
		}
	}
	return nil
}

// readPiece is one read of a partition: dst from the file at off.
type readPiece struct {
	dst []byte
	off int64
}

// appendPieces splits the read of dst from off into readChunk pieces.
func appendPieces(pieces []readPiece, dst []byte, off uint64) []readPiece {
	for lo := 0; lo < len(dst); lo += readChunk {
		pieces = append(pieces, readPiece{dst[lo:min(len(dst), lo+readChunk)], int64(off) + int64(lo)})
	}
	return pieces
}

// readPieces reads pieces from f, spread over up to threads readers.
func readPieces(f *os.File, path string, pieces []readPiece, threads int) error {
	threads = max(1, min(threads, len(pieces)))
	errs := make([]error, threads)
	var wg sync.WaitGroup
	for t := range threads {
		wg.Go(func() {
			for i := t; i < len(pieces) && errs[t] == nil; i += threads {
				// ReadAt (pread) is safe beside other ReadAts and reads
				// the whole piece or says why not.
				if _, err := f.ReadAt(pieces[i].dst, pieces[i].off); err != nil {
					errs[t] = Errorf(ErrInternal, "partition file %s: reading %d bytes at %d: %v",
						path, len(pieces[i].dst), pieces[i].off, err)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// wordBytes views words as bytes.
func wordBytes(v []uint64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*8)
}

// layoutField is one offset of a handle, as given and as its layout wants it.
type layoutField struct {
	name      string
	got, want uint64
}

// checkHandle checks the fields of h against each other, before any file is
// touched.
func checkHandle(h PartitionHandle) error {
	switch h.Curve {
	case CurveBLS12381, CurveBN254:
	default:
		return Errorf(ErrInvalidArgument, "partition handle: unknown curve %q", h.Curve)
	}
	if h.NbWires == 0 || h.NbWires > MaxPartitionElements {
		return Errorf(ErrInvalidArgument, "partition handle: nb_wires is %d, want 1..%d", h.NbWires, uint64(MaxPartitionElements))
	}
	if h.NbConstraints == 0 || h.NbConstraints > MaxPartitionElements {
		return Errorf(ErrInvalidArgument, "partition handle: nb_constraints is %d, want 1..%d", h.NbConstraints, uint64(MaxPartitionElements))
	}
	var fields []layoutField
	var size uint64
	switch h.Format {
	case FormatFull:
		var wOff, aOff, bOff uint64
		wOff, aOff, bOff, size = PartitionLayout(h.NbWires, h.NbConstraints)
		fields = []layoutField{
			{"w_offset", h.WOffset, wOff},
			{"a_offset", h.AOffset, aOff},
			{"b_offset", h.BOffset, bOff},
		}
	case FormatCompactW:
		if h.NbOther > h.NbWires {
			return Errorf(ErrInvalidArgument, "partition handle: nb_other is %d, above nb_wires %d", h.NbOther, h.NbWires)
		}
		var oOff, bitsOff, vOff uint64
		oOff, bitsOff, vOff, size = CompactLayout(h.NbWires, h.NbOther)
		fields = []layoutField{
			{"other_offset", h.OtherOffset, oOff},
			{"bits_offset", h.BitsOffset, bitsOff},
			{"values_offset", h.ValuesOffset, vOff},
		}
	default:
		return Errorf(ErrInvalidArgument, "partition handle: unknown format %d", uint32(h.Format))
	}
	for _, f := range fields {
		if f.got != f.want {
			return Errorf(ErrInvalidArgument, "partition handle: %s is %d, want %d for %d wires and %d constraints",
				f.name, f.got, f.want, h.NbWires, h.NbConstraints)
		}
	}
	if h.Size < 0 || uint64(h.Size) != size {
		return Errorf(ErrInvalidArgument, "partition handle: size is %d, want %d for %d wires and %d constraints",
			h.Size, size, h.NbWires, h.NbConstraints)
	}
	if !filepath.IsAbs(h.Path) {
		return Errorf(ErrInvalidArgument, "partition handle: path %q is not absolute", h.Path)
	}
	return nil
}

// Handle returns the handle the partition was opened with.
func (p *Partition) Handle() PartitionHandle { return p.h }

// Bytes returns the bytes of one section (without its alignment padding), or
// nil for an unknown section or a closed partition.
func (p *Partition) Bytes(s Section) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.h.Format != FormatFull {
		return nil
	}
	switch s {
	case SectionW:
		return p.data[p.h.WOffset : p.h.WOffset+p.h.NbWires*ElementSize : p.h.WOffset+p.h.NbWires*ElementSize]
	case SectionA:
		return p.data[p.h.AOffset : p.h.AOffset+p.h.NbConstraints*ElementSize : p.h.AOffset+p.h.NbConstraints*ElementSize]
	case SectionB:
		return p.data[p.h.BOffset : p.h.BOffset+p.h.NbConstraints*ElementSize : p.h.BOffset+p.h.NbConstraints*ElementSize]
	}
	return nil
}

// Compact returns a FormatCompactW partition's bitmaps and values (see
// CompactLayout), aliasing the read-only mapping; nils for a full partition or
// a closed one. OpenPartition does not count the bitmaps' bits: check them
// with ExpandW, or read with ReadCompactPartition, before trusting NbOther.
func (p *Partition) Compact() (other, bits []uint64, values []fr.Element) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.h.Format != FormatCompactW {
		return nil, nil, nil
	}
	n := CompactWords(p.h.NbWires) * 8
	other = words(p.data[p.h.OtherOffset : p.h.OtherOffset+n : p.h.OtherOffset+n])
	bits = words(p.data[p.h.BitsOffset : p.h.BitsOffset+n : p.h.BitsOffset+n])
	v := p.h.NbOther * ElementSize
	values = elements(p.data[p.h.ValuesOffset : p.h.ValuesOffset+v : p.h.ValuesOffset+v])
	return other, bits, values
}

// Raw returns the whole read-only mapping (every section with its padding), for a
// backend that pins it for DMA; nil once closed.
func (p *Partition) Raw() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	return p.data
}

// W returns the wire vector of a BLS12-381 partition as its scalars, aliasing the
// read-only mapping, and nil for another curve's (Vectors serves every curve).
func (p *Partition) W() []fr.Element { return p.blsElements(SectionW) }

// A returns A's evaluations as W does.
func (p *Partition) A() []fr.Element { return p.blsElements(SectionA) }

// B returns B's evaluations as W does.
func (p *Partition) B() []fr.Element { return p.blsElements(SectionB) }

// blsElements views section s as BLS12-381 scalars, nil for another curve's
// partition.
func (p *Partition) blsElements(s Section) []fr.Element {
	if p.h.Curve != CurveBLS12381 {
		return nil
	}
	return elements(p.Bytes(s))
}

// Vectors returns the W, A and B of full partition p as scalars S, the
// fr.Element of p's curve (gnark-crypto's bls12-381/fr or bn254/fr), aliasing
// the read-only mapping: W, A and B of either curve through one call. Scalars of
// another curve than the partition's are an ErrInvalidArgument naming both (the
// bytes would read as numbers of the wrong field), as are a compact partition
// (its W is packed: ReadCompactPartition) and a closed one.
func Vectors[S ~[4]uint64](p *Partition) (W, A, B []S, err error) {
	if err := checkScalarCurve[S](p.h.Curve); err != nil {
		return nil, nil, nil, Errorf(ErrInvalidArgument, "partition file %s: %v", p.h.Path, err)
	}
	if p.h.Format != FormatFull {
		return nil, nil, nil, Errorf(ErrInvalidArgument, "partition file %s: format %s, not W, A and B", p.h.Path, p.h.Format)
	}
	w, a, b := p.Bytes(SectionW), p.Bytes(SectionA), p.Bytes(SectionB)
	if w == nil {
		return nil, nil, nil, Errorf(ErrInvalidArgument, "partition file %s: closed", p.h.Path)
	}
	return elementsOf[S](w), elementsOf[S](a), elementsOf[S](b), nil
}

// checkScalarCurve refuses scalars S of another curve than c: the two curves'
// fr.Element are both four words, and only the type says which field they are
// numbers of.
func checkScalarCurve[S ~[4]uint64](c Curve) error {
	id := curve.ScalarIDOf[S]()
	if id == ecc.UNKNOWN {
		return fmt.Errorf("%T is no scalar of BLS12-381 or BN254", *new(S))
	}
	if got := Curve(curve.Name(id)); got != c {
		return fmt.Errorf("the vectors are %s scalars, the partition is %s", curve.Title(id), curve.TitleOf(string(c)))
	}
	return nil
}

// elements views b (a whole number of 32-byte elements, 8-byte aligned since
// sections start on page boundaries) as field elements without copying.
func elements(b []byte) []fr.Element { return elementsOf[fr.Element](b) }

// elementsOf is elements for the scalars S of either curve.
func elementsOf[S ~[4]uint64](b []byte) []S {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*S)(unsafe.Pointer(&b[0])), len(b)/ElementSize)
}

// Close unmaps the partition. Slices obtained before are invalid afterwards.
// Closing twice is not an error.
func (p *Partition) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if err := unix.Munmap(p.data); err != nil {
		return Errorf(ErrInternal, "partition file %s: unmapping: %v", p.h.Path, err)
	}
	p.data = nil
	return nil
}

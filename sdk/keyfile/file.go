package keyfile

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"

	"github.com/zkhost/zkhost/sdk/curve"
)

// Format constants. docs/keyfile.md describes the layout they define.
const (
	// Magic opens every key file.
	Magic = "ZKHOSTPK"
	// Version is the only format version this package reads and writes.
	Version uint32 = 1
	// CurveBLS12381 is the curve id of BLS12-381 keys.
	CurveBLS12381 uint32 = 1
	// CurveBN254 is the curve id of BN254 keys.
	CurveBN254 uint32 = 2
	// HeaderSize is the size of the header block; HeaderDigest hashes all of it.
	HeaderSize = 4096
	// Align is the alignment of every section's offset in the file.
	Align = 4096
)

// pointSizes are the sizes in bytes of an affine G1 and G2 point of each curve in the
// sections (gnark-crypto's in-memory layout: two or four base field elements).
type pointSizes struct{ g1, g2 uint64 }

// curves maps the header's curve ids to the curves and their point sizes.
var curves = map[uint32]struct {
	id    ecc.ID
	sizes pointSizes
}{
	CurveBLS12381: {ecc.BLS12_381, pointSizes{96, 192}},
	CurveBN254:    {ecc.BN254, pointSizes{64, 128}},
}

// The compiler checks that gnark-crypto's point types have the layout the format assumes.
var (
	_ [96]byte  = [unsafe.Sizeof(bls12381.G1Affine{})]byte{}
	_ [192]byte = [unsafe.Sizeof(bls12381.G2Affine{})]byte{}
	_ [64]byte  = [unsafe.Sizeof(bn254.G1Affine{})]byte{}
	_ [128]byte = [unsafe.Sizeof(bn254.G2Affine{})]byte{}
	_ [1]byte   = [unsafe.Sizeof(false)]byte{}
)

// fileCurveID returns the header's curve id of the curve whose G1 points are G1.
func fileCurveID[G1 any]() (uint32, error) {
	if fid, ok := CurveIDOf(curve.IDOf[G1]()); ok {
		return fid, nil
	}
	return 0, fmt.Errorf("keyfile: points of type %T belong to no curve the format has", *new(G1))
}

// CurveIDOf returns the header's curve id of curve id (CurveBLS12381,
// CurveBN254), false for a curve the format does not have. zkhost's other
// binary formats that name a curve (a compact wire assignment, sdk/circuit)
// use the same ids, so that one table numbers the curves.
func CurveIDOf(id ecc.ID) (uint32, bool) {
	for fid, c := range curves {
		if c.id == id {
			return fid, true
		}
	}
	return 0, false
}

// CurveOfID returns the curve whose header id is fid, false for an id the
// format does not have.
func CurveOfID(fid uint32) (ecc.ID, bool) {
	c, ok := curves[fid]
	return c.id, ok
}

// SectionKind identifies a section of a key file.
type SectionKind uint32

// The sections of a version 1 file, in the order they appear in the header and the file.
const (
	SectionG1Small SectionKind = iota + 1 // alpha, beta, delta in G1
	SectionG2Small                        // beta, delta in G2
	SectionG1A                            // pk.G1.A
	SectionG1B                            // pk.G1.B
	SectionG1K                            // pk.G1.K
	SectionG1Z                            // pk.G1.Z
	SectionG2B                            // pk.G2.B
	SectionInfA                           // InfinityA, one byte per wire
	SectionInfB                           // InfinityB, one byte per wire
)

// nbSections is the number of sections of a version 1 file.
const nbSections = 9

// String returns the section's name as docs/keyfile.md and error messages spell it.
func (k SectionKind) String() string {
	names := [...]string{"", "g1_small", "g2_small", "g1_a", "g1_b", "g1_k", "g1_z", "g2_b", "inf_a", "inf_b"}
	if k >= 1 && int(k) < len(names) {
		return names[k]
	}
	return fmt.Sprintf("section(%d)", uint32(k))
}

// elemSize returns the size in bytes of one element of a section of kind k on a curve
// with points of these sizes.
func (k SectionKind) elemSize(sizes pointSizes) uint64 {
	switch k {
	case SectionG1Small, SectionG1A, SectionG1B, SectionG1K, SectionG1Z:
		return sizes.g1
	case SectionG2Small, SectionG2B:
		return sizes.g2
	default:
		return 1
	}
}

// Header layout offsets.
const (
	offMagic      = 0
	offVersion    = 8
	offCurve      = 12
	offDomainSize = 16
	offNbWires    = 24
	offNbPublic   = 32
	offNbSections = 40 // uint32
	offHForm      = 44 // uint32, the key's HForm; reserved and zero before the field existed
	offSections   = 48
	sectionEntry  = 4 + 8 + 8 + 8 + 32 // kind, offset, length, count, sha256
)

// Section describes one section of a key file as its header records it.
type Section struct {
	Kind   SectionKind
	Offset uint64   // from the start of the file, a multiple of Align
	Length uint64   // bytes, Count times the element size
	Count  uint64   // number of elements (points or flags)
	SHA256 [32]byte // digest of the section's Length bytes
}

// isLittleEndian reports whether the host stores integers little-endian; the format's
// sections are the host's in-memory representation, so only such hosts can use it.
func isLittleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

var errBigEndian = errors.New("keyfile: this host is big-endian; the key file format is defined for little-endian hosts only")

// bytesOf views a slice of fixed-size values as its raw bytes.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(s[0]))
}

// viewAs views raw bytes as a slice of n fixed-size values. b must be suitably aligned and
// hold exactly n values.
func viewAs[T any](b []byte, n uint64) []T {
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// sectionData returns the raw bytes of each section of k, in file order.
func sectionData[G1, G2 any](k *ProvingKey[G1, G2]) [nbSections][]byte {
	g1Small := []G1{k.G1Alpha, k.G1Beta, k.G1Delta}
	g2Small := []G2{k.G2Beta, k.G2Delta}
	return [nbSections][]byte{
		bytesOf(g1Small), bytesOf(g2Small),
		bytesOf(k.G1A), bytesOf(k.G1B), bytesOf(k.G1K), bytesOf(k.G1Z), bytesOf(k.G2B),
		bytesOf(k.InfinityA), bytesOf(k.InfinityB),
	}
}

// alignUp rounds n up to a multiple of Align.
func alignUp(n uint64) uint64 { return (n + Align - 1) / Align * Align }

// Write writes k to path in the key file format and returns the header digest, the key's
// identity. It writes a temporary file in the same directory, syncs it and renames it over
// path, so readers see either the old file or the complete new one; on error it leaves
// nothing behind. The file's mode is 0644.
func Write[G1, G2 any](path string, k *ProvingKey[G1, G2]) (headerDigest [32]byte, err error) {
	if !isLittleEndian() {
		return headerDigest, errBigEndian
	}
	if k == nil {
		return headerDigest, errors.New("keyfile: nil proving key")
	}
	if err := k.Check(); err != nil {
		return headerDigest, err
	}
	curveID, err := fileCurveID[G1]()
	if err != nil {
		return headerDigest, err
	}
	sizes := curves[curveID].sizes

	// The sections are hashed and written side by side, each at its offset (pwrite), and
	// the header, which records the digests, goes in last: a key of 2^24 constraints is
	// 9.7 GB, and this way hashing takes as long as the largest section (g2_b, a third of
	// it), not all of them in turn, and overlaps the writing. The padding between sections
	// reads as zeros (a file hole); Truncate sets the size the last section ends at.
	data := sectionData(k)
	var secs [nbSections]Section
	off := uint64(HeaderSize)
	for i := range secs {
		kind := SectionKind(i + 1)
		secs[i] = Section{
			Kind:   kind,
			Offset: off,
			Length: uint64(len(data[i])),
			Count:  uint64(len(data[i])) / kind.elemSize(sizes),
		}
		off = alignUp(off + secs[i].Length)
	}

	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return headerDigest, fmt.Errorf("keyfile: create temporary file: %w", err)
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()

	var wg sync.WaitGroup
	var writeErrs [nbSections]error
	for i := range secs {
		wg.Go(func() {
			secs[i].SHA256 = sha256.Sum256(data[i])
		})
		wg.Go(func() {
			if _, err := tmp.WriteAt(data[i], int64(secs[i].Offset)); err != nil {
				writeErrs[i] = fmt.Errorf("keyfile: write section %s to %s: %w", secs[i].Kind, tmpName, err)
			}
		})
	}
	wg.Wait()
	if err = errors.Join(writeErrs[:]...); err != nil {
		return headerDigest, err
	}
	header := encodeHeader(k, curveID, secs[:])
	headerDigest = sha256.Sum256(header)
	if _, err = tmp.WriteAt(header, 0); err != nil {
		return headerDigest, fmt.Errorf("keyfile: write %s: %w", tmpName, err)
	}
	last := secs[nbSections-1]
	if err = tmp.Truncate(int64(last.Offset + last.Length)); err != nil {
		return headerDigest, fmt.Errorf("keyfile: write %s: %w", tmpName, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return headerDigest, fmt.Errorf("keyfile: chmod %s: %w", tmpName, err)
	}
	if err = tmp.Sync(); err != nil {
		return headerDigest, fmt.Errorf("keyfile: sync %s: %w", tmpName, err)
	}
	if err = tmp.Close(); err != nil {
		return headerDigest, fmt.Errorf("keyfile: close %s: %w", tmpName, err)
	}
	if err = os.Rename(tmpName, path); err != nil {
		return headerDigest, fmt.Errorf("keyfile: rename %s to %s: %w", tmpName, path, err)
	}
	syncDir(dir)
	return headerDigest, nil
}

// syncDir makes a rename in dir durable. It is best effort: some file systems refuse to
// sync directories, and the rename itself has already succeeded.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// encodeHeader builds the HeaderSize-byte header block for k, a key on the curve with
// header id curveID, with the given sections.
func encodeHeader[G1, G2 any](k *ProvingKey[G1, G2], curveID uint32, secs []Section) []byte {
	h := make([]byte, HeaderSize)
	le := binary.LittleEndian
	copy(h[offMagic:], Magic)
	le.PutUint32(h[offVersion:], Version)
	le.PutUint32(h[offCurve:], curveID)
	le.PutUint64(h[offDomainSize:], k.DomainSize)
	le.PutUint64(h[offNbWires:], k.NbWires)
	le.PutUint64(h[offNbPublic:], k.NbPublic)
	le.PutUint32(h[offNbSections:], uint32(len(secs)))
	le.PutUint32(h[offHForm:], uint32(k.HForm))
	for i, s := range secs {
		e := h[offSections+i*sectionEntry:]
		le.PutUint32(e[0:], uint32(s.Kind))
		le.PutUint64(e[4:], s.Offset)
		le.PutUint64(e[12:], s.Length)
		le.PutUint64(e[20:], s.Count)
		copy(e[28:60], s.SHA256[:])
	}
	return h
}

// File is an open key file: a read-only shared mapping of the whole file and the
// ProvingKey whose slices alias it, of the curve the header names. A File is safe for
// concurrent use; the key's slices are valid until Close.
type File struct {
	path     string
	size     int64
	digest   [32]byte
	curve    ecc.ID
	sections [nbSections]Section
	header   Header
	key      any // *BLS12381Key or *BN254Key, by curve
	mu       sync.Mutex
	data     []byte // the mapping; nil once closed
}

// Open maps the key file at path read-only and validates its header: magic, version,
// curve, sizes, and that every section lies in the file, on a 4096-byte boundary, in order,
// with the element count the sizes imply. It reads the one-byte-per-wire infinity flags
// (to check they are 0 or 1 and agree with the point counts) but not the points: call
// Verify to check the section digests.
func Open(path string) (*File, error) {
	if !isLittleEndian() {
		return nil, errBigEndian
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keyfile: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("keyfile: %w", err)
	}
	size := st.Size()
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("keyfile: %s is not a regular file", path)
	}
	if size < HeaderSize {
		return nil, fmt.Errorf("keyfile: %s is truncated: %d bytes, shorter than the %d-byte header", path, size, HeaderSize)
	}
	if uint64(size) > uint64(^uint(0)>>1) {
		return nil, fmt.Errorf("keyfile: %s is too large to map (%d bytes)", path, size)
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("keyfile: map %s: %w", path, err)
	}
	f := &File{path: path, size: size, data: data}
	if err := f.parse(); err != nil {
		syscall.Munmap(data)
		return nil, fmt.Errorf("keyfile: %s: %w", path, err)
	}
	return f, nil
}

// parse validates the header of f's mapping and builds f.key.
func (f *File) parse() error {
	data := f.data
	h := data[:HeaderSize]
	le := binary.LittleEndian
	if string(h[offMagic:offMagic+len(Magic)]) != Magic {
		return fmt.Errorf("bad magic %q, want %q (not a zkhost key file)", h[offMagic:offMagic+len(Magic)], Magic)
	}
	if v := le.Uint32(h[offVersion:]); v != Version {
		return fmt.Errorf("unsupported format version %d (this build reads version %d)", v, Version)
	}
	c, ok := curves[le.Uint32(h[offCurve:])]
	if !ok {
		return fmt.Errorf("unknown curve id %d, want %d (BLS12-381) or %d (BN254)", le.Uint32(h[offCurve:]), CurveBLS12381, CurveBN254)
	}
	f.curve = c.id
	sizes := c.sizes
	k := Header{
		DomainSize: le.Uint64(h[offDomainSize:]),
		NbWires:    le.Uint64(h[offNbWires:]),
		NbPublic:   le.Uint64(h[offNbPublic:]),
	}
	if n := le.Uint32(h[offNbSections:]); n != nbSections {
		return fmt.Errorf("header lists %d sections, want %d", n, nbSections)
	}
	switch k.HForm = HForm(le.Uint32(h[offHForm:])); k.HForm {
	case HFormGnark, HFormSnarkjs:
	default:
		return fmt.Errorf("unknown H form %d in the header, want %d (%s) or %d (%s)", uint32(k.HForm), HFormGnark, HFormGnark, HFormSnarkjs, HFormSnarkjs)
	}
	end := offSections + nbSections*sectionEntry
	if !allZero(h[end:]) {
		return errors.New("header padding is not zero")
	}
	if k.DomainSize == 0 || k.DomainSize&(k.DomainSize-1) != 0 {
		return fmt.Errorf("domain size %d is not a power of two", k.DomainSize)
	}
	if k.NbPublic == 0 || k.NbPublic > k.NbWires {
		return fmt.Errorf("%d public wires out of %d wires (need 1 ≤ public ≤ wires)", k.NbPublic, k.NbWires)
	}

	fileSize := uint64(f.size)
	prevEnd := uint64(HeaderSize)
	for i := range f.sections {
		e := h[offSections+i*sectionEntry:]
		s := Section{
			Kind:   SectionKind(le.Uint32(e[0:])),
			Offset: le.Uint64(e[4:]),
			Length: le.Uint64(e[12:]),
			Count:  le.Uint64(e[20:]),
		}
		copy(s.SHA256[:], e[28:60])
		if want := SectionKind(i + 1); s.Kind != want {
			return fmt.Errorf("section entry %d has kind %s, want %s", i, s.Kind, want)
		}
		if s.Offset%Align != 0 {
			return fmt.Errorf("section %s: offset %d is not a multiple of %d (misaligned)", s.Kind, s.Offset, Align)
		}
		if s.Offset < prevEnd {
			return fmt.Errorf("section %s: offset %d overlaps the header or the previous section (which ends at %d)", s.Kind, s.Offset, prevEnd)
		}
		if s.Length/s.Kind.elemSize(sizes) != s.Count || s.Length%s.Kind.elemSize(sizes) != 0 {
			return fmt.Errorf("section %s: length %d bytes does not match count %d of %d-byte elements", s.Kind, s.Length, s.Count, s.Kind.elemSize(sizes))
		}
		if s.Offset > fileSize || s.Length > fileSize-s.Offset {
			return fmt.Errorf("file is truncated or section %s is out of bounds: it spans [%d, %d) but the file has %d bytes", s.Kind, s.Offset, s.Offset+s.Length, fileSize)
		}
		prevEnd = s.Offset + s.Length
		f.sections[i] = s
	}
	if prevEnd != fileSize {
		return fmt.Errorf("file has %d bytes after its last section (ends at %d, file size %d)", fileSize-prevEnd, prevEnd, fileSize)
	}

	sec := func(kind SectionKind) []byte {
		s := f.sections[kind-1]
		return data[s.Offset : s.Offset+s.Length]
	}
	// Counts the header sizes imply. inf_a and inf_b come first: the point counts of
	// g1_a, g1_b and g2_b depend on their contents.
	wantCount := func(kind SectionKind, want uint64, why string) error {
		if got := f.sections[kind-1].Count; got != want {
			return fmt.Errorf("section %s has %d elements, want %d (%s)", kind, got, want, why)
		}
		return nil
	}
	for _, c := range []struct {
		kind SectionKind
		want uint64
		why  string
	}{
		{SectionG1Small, 3, "alpha, beta, delta"},
		{SectionG2Small, 2, "beta, delta"},
		{SectionInfA, k.NbWires, "one per wire"},
		{SectionInfB, k.NbWires, "one per wire"},
		{SectionG1K, k.NbWires - k.NbPublic, "one per private wire"},
		{SectionG1Z, k.HForm.NbZ(k.DomainSize), "the domain size minus one, or the domain size for a key in snarkjs's H form"},
	} {
		if err := wantCount(c.kind, c.want, c.why); err != nil {
			return err
		}
	}
	for _, kind := range []SectionKind{SectionInfA, SectionInfB} {
		for i, b := range sec(kind) {
			if b > 1 {
				return fmt.Errorf("section %s: byte %d is %d, want 0 or 1", kind, i, b)
			}
		}
	}
	k.InfinityA = viewAs[bool](sec(SectionInfA), k.NbWires)
	k.InfinityB = viewAs[bool](sec(SectionInfB), k.NbWires)
	finiteA := k.NbWires - countTrue(k.InfinityA)
	finiteB := k.NbWires - countTrue(k.InfinityB)
	if err := wantCount(SectionG1A, finiteA, "wires whose inf_a flag is 0"); err != nil {
		return err
	}
	if err := wantCount(SectionG1B, finiteB, "wires whose inf_b flag is 0"); err != nil {
		return err
	}
	if err := wantCount(SectionG2B, finiteB, "wires whose inf_b flag is 0"); err != nil {
		return err
	}

	var err error
	switch f.curve {
	case ecc.BLS12_381:
		f.key, err = view[bls12381.G1Affine, bls12381.G2Affine](k, sec, f.sections)
	case ecc.BN254:
		f.key, err = view[bn254.G1Affine, bn254.G2Affine](k, sec, f.sections)
	}
	if err != nil {
		return err
	}
	f.header = k
	f.digest = sha256.Sum256(h)
	return nil
}

// Header is the part of a key that does not depend on its curve: the sizes and H form
// the header records, and the infinity flags (which alias the mapping, as the key's
// slices do).
type Header struct {
	DomainSize, NbWires, NbPublic uint64
	HForm                         HForm
	InfinityA, InfinityB          []bool
}

// view returns the key whose points alias the sections sec returns, for a curve with
// points G1 and G2, and checks it.
func view[G1, G2 any](h Header, sec func(SectionKind) []byte, sections [nbSections]Section) (*ProvingKey[G1, G2], error) {
	k := &ProvingKey[G1, G2]{
		DomainSize: h.DomainSize, NbWires: h.NbWires, NbPublic: h.NbPublic, HForm: h.HForm,
		InfinityA: h.InfinityA, InfinityB: h.InfinityB,
	}
	g1Small := viewAs[G1](sec(SectionG1Small), 3)
	g2Small := viewAs[G2](sec(SectionG2Small), 2)
	k.G1Alpha, k.G1Beta, k.G1Delta = g1Small[0], g1Small[1], g1Small[2]
	k.G2Beta, k.G2Delta = g2Small[0], g2Small[1]
	k.G1A = viewAs[G1](sec(SectionG1A), sections[SectionG1A-1].Count)
	k.G1B = viewAs[G1](sec(SectionG1B), sections[SectionG1B-1].Count)
	k.G1K = viewAs[G1](sec(SectionG1K), sections[SectionG1K-1].Count)
	k.G1Z = viewAs[G1](sec(SectionG1Z), sections[SectionG1Z-1].Count)
	k.G2B = viewAs[G2](sec(SectionG2B), sections[SectionG2B-1].Count)
	if err := k.Check(); err != nil {
		return nil, err
	}
	return k, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Curve returns the curve the header names.
func (f *File) Curve() ecc.ID { return f.curve }

// Header returns the key's sizes, H form and infinity flags, whatever its curve.
func (f *File) Header() Header { return f.header }

// KeyOf returns f's proving key, whose points are G1 and G2, or an error naming both
// curves when f holds a key of another curve. The key's slices alias the read-only
// mapping: never write to them, and do not use them after Close (the process would
// fault).
func KeyOf[G1, G2 any](f *File) (*ProvingKey[G1, G2], error) {
	k, ok := f.key.(*ProvingKey[G1, G2])
	if !ok {
		return nil, fmt.Errorf("keyfile: %s holds a %s key, not %s", f.path, curve.Name(f.curve), curve.Name(curve.IDOf[G1]()))
	}
	return k, nil
}

// BLS12381 returns KeyOf(f) for BLS12-381: f's key, or an error if it is another curve's.
func (f *File) BLS12381() (*BLS12381Key, error) {
	return KeyOf[bls12381.G1Affine, bls12381.G2Affine](f)
}

// BN254 returns KeyOf(f) for BN254.
func (f *File) BN254() (*BN254Key, error) { return KeyOf[bn254.G1Affine, bn254.G2Affine](f) }

// HeaderDigest returns the SHA-256 of the 4096-byte header block. The header records every
// section's SHA-256, so this digest identifies the whole key (once Verify has passed).
func (f *File) HeaderDigest() [32]byte { return f.digest }

// Sections returns the sections as the header records them, in file order.
func (f *File) Sections() []Section { return append([]Section(nil), f.sections[:]...) }

// Path returns the path the file was opened from.
func (f *File) Path() string { return f.path }

// Size returns the file's size in bytes (all of it is mapped).
func (f *File) Size() int64 { return f.size }

// Verify recomputes every section's SHA-256 and compares it with the header's, hashing the
// sections in parallel; it reads the whole file once. Its error names the first section,
// in file order, whose digest does not match.
func (f *File) Verify() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.data == nil {
		return fmt.Errorf("keyfile: %s: verify after Close", f.path)
	}
	var sums [nbSections][32]byte
	var wg sync.WaitGroup
	for i, s := range f.sections {
		wg.Go(func() {
			sums[i] = sha256.Sum256(f.data[s.Offset : s.Offset+s.Length])
		})
	}
	wg.Wait()
	for i, s := range f.sections {
		if sums[i] != s.SHA256 {
			return fmt.Errorf("keyfile: %s: section %s is corrupt: SHA-256 %x, header records %x", f.path, s.Kind, sums[i], s.SHA256)
		}
	}
	return nil
}

// Close unmaps the file. The key's slices are invalid afterwards. Closing twice is a no-op.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.data == nil {
		return nil
	}
	err := syscall.Munmap(f.data)
	f.data = nil
	if err != nil {
		return fmt.Errorf("keyfile: unmap %s: %w", f.path, err)
	}
	return nil
}

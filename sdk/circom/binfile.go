package circom

import (
	"encoding/binary"
	"fmt"
)

// binFile is iden3's binary container, shared by .r1cs, .wtns and .zkey: the magic (four
// bytes), the version (uint32), the number of sections (uint32), then each section as its type
// (uint32), its byte size (uint64) and its content. All integers are little-endian. Sections may
// come in any order and a type may repeat; each format says which types it needs once.
type binFile struct {
	sections map[uint32][][]byte // content of each section, by type, in file order
}

// parseBinFile splits data into sections after checking the magic and the version. The sections
// must cover the rest of the file exactly: a size that runs past the end, or bytes after the last
// section, mean the file is not what it says.
func parseBinFile(data []byte, magic string, version uint32) (*binFile, error) {
	r := byteReader{data: data, what: "file header"}
	head, err := r.bytes(4)
	if err != nil {
		return nil, err
	}
	if string(head) != magic {
		return nil, fmt.Errorf("%w: got %q, want %q", ErrMagic, head, magic)
	}
	gotVersion, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if gotVersion != version {
		return nil, fmt.Errorf("%w: %s version %d, this reader reads version %d", ErrVersion, magic, gotVersion, version)
	}
	numSections, err := r.uint32()
	if err != nil {
		return nil, err
	}
	f := &binFile{sections: map[uint32][][]byte{}}
	for i := uint32(0); i < numSections; i++ {
		r.what = fmt.Sprintf("section header %d", i)
		sectionType, err := r.uint32()
		if err != nil {
			return nil, err
		}
		size, err := r.uint64()
		if err != nil {
			return nil, err
		}
		if size > uint64(r.remaining()) {
			return nil, fmt.Errorf("%w: section %d (type %d) says %d bytes, only %d remain in the file",
				ErrTruncated, i, sectionType, size, r.remaining())
		}
		content, _ := r.bytes(int(size))
		f.sections[sectionType] = append(f.sections[sectionType], content)
	}
	if r.remaining() != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last of %d sections", ErrSections, r.remaining(), numSections)
	}
	return f, nil
}

// uniqueSection returns the content of the one section of a type. A missing or a repeated
// section is an error when the format needs exactly one; ok is false for a missing section
// that is optional.
func (f *binFile) uniqueSection(sectionType uint32, name string, required bool) (content []byte, ok bool, err error) {
	found := f.sections[sectionType]
	switch {
	case len(found) == 0 && required:
		return nil, false, fmt.Errorf("%w: no %s section (type %d)", ErrSections, name, sectionType)
	case len(found) == 0:
		return nil, false, nil
	case len(found) > 1:
		return nil, false, fmt.Errorf("%w: %d %s sections (type %d), want one", ErrSections, len(found), name, sectionType)
	}
	return found[0], true, nil
}

// byteReader reads little-endian integers and byte runs from a slice, and says what it was
// reading when the slice ends too early. It never reads past the end and never panics.
type byteReader struct {
	data []byte
	pos  int
	what string // the part of the file being read, for error messages
}

func (r *byteReader) remaining() int { return len(r.data) - r.pos }

func (r *byteReader) bytes(n int) ([]byte, error) {
	if n < 0 || n > r.remaining() {
		return nil, fmt.Errorf("%w: %s: need %d bytes at offset %d, %d remain", ErrTruncated, r.what, n, r.pos, r.remaining())
	}
	b := r.data[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *byteReader) uint32() (uint32, error) {
	b, err := r.bytes(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *byteReader) uint64() (uint64, error) {
	b, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// expectEnd checks that a section's content was used up: a section bigger than what its counts
// describe is as wrong as one that is too small.
func (r *byteReader) expectEnd() error {
	if r.remaining() != 0 {
		return fmt.Errorf("%w: %s: %d bytes left over after its content", ErrSections, r.what, r.remaining())
	}
	return nil
}

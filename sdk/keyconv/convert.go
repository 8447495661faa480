package keyconv

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"

	"github.com/zkhost/zkhost/sdk/keyfile"
)

// Convert reads a gnark BLS12-381 Groth16 proving key file, written by gnark's
// ProvingKey.WriteTo (compressed points) or WriteRawTo (raw points), and writes it to
// outPath in zkhost's key file format (sdk/keyfile). It returns the new file's header digest. Points are
// decoded with gnark's subgroup checks, so a corrupt input file is refused rather than
// converted. Keys with commitments are refused.
func Convert(gnarkPKPath, outPath string) ([32]byte, error) {
	pk, err := readGnarkKey(gnarkPKPath)
	if err != nil {
		return [32]byte{}, err
	}
	k, err := FromGnark(pk)
	if err != nil {
		return [32]byte{}, fmt.Errorf("converting %s: %w", gnarkPKPath, err)
	}
	return keyfile.Write(outPath, k)
}

// maxLogDomain is the two-adicity of BLS12-381's scalar field: no FFT domain is larger
// than 2^32.
const maxLogDomain = 32

// readGnarkKey decodes a gnark BLS12-381 proving key file. gnark's decoder trusts the
// sizes it reads (a bad domain size panics while precomputing twiddles), so the domain
// size is checked first and any remaining decoder panic becomes an error.
func readGnarkKey(path string) (pk *groth16_bls12381.ProvingKey, err error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keyconv: convert: %w", err)
	}
	defer in.Close()
	br := bufio.NewReaderSize(in, 1<<20)
	head, err := br.Peek(8)
	if err != nil {
		return nil, fmt.Errorf("keyconv: convert: %s is not a gnark BLS12-381 proving key: %w", path, err)
	}
	// gnark writes the domain's cardinality first, as a big-endian uint64.
	card := binary.BigEndian.Uint64(head)
	if card == 0 || card&(card-1) != 0 || card > 1<<maxLogDomain {
		return nil, fmt.Errorf("keyconv: convert: %s is not a gnark BLS12-381 proving key: domain size %d is not a power of two up to 2^%d", path, card, maxLogDomain)
	}
	defer func() {
		if r := recover(); r != nil {
			pk, err = nil, fmt.Errorf("keyconv: convert: %s is not a valid gnark BLS12-381 proving key: decoder failed: %v", path, r)
		}
	}()
	pk = new(groth16_bls12381.ProvingKey)
	// gnark's decoder reads each point's flag bits, so one call reads both encodings.
	if _, err := pk.ReadFrom(br); err != nil {
		return nil, fmt.Errorf("keyconv: convert: %s is not a gnark BLS12-381 proving key: %w", path, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("keyconv: convert: %s has trailing bytes after the proving key", path)
	}
	return pk, nil
}

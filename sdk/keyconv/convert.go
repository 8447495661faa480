package keyconv

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"os"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// Convert reads a gnark Groth16 proving key file of BLS12-381 or BN254, written by
// gnark's ProvingKey.WriteTo (compressed points) or WriteRawTo (raw points), and writes
// it to outPath in zkhost's key file format (sdk/keyfile). It returns the new file's
// header digest. The file does not name its curve; its domain does (gnarkKeyCurve),
// and the points are decoded with gnark's subgroup checks, so a corrupt input file is
// refused rather than converted. Keys with commitments are refused.
func Convert(gnarkPKPath, outPath string) ([32]byte, error) {
	id, err := gnarkKeyCurve(gnarkPKPath)
	if err != nil {
		return [32]byte{}, err
	}
	pk, err := readGnarkKey(gnarkPKPath, id)
	if err != nil {
		return [32]byte{}, err
	}
	var digest [32]byte
	switch pk := pk.(type) {
	case *groth16_bls12381.ProvingKey:
		var k *keyfile.BLS12381Key
		if k, err = FromGnark(pk); err == nil {
			digest, err = keyfile.Write(outPath, k)
		}
	case *groth16_bn254.ProvingKey:
		var k *keyfile.BN254Key
		if k, err = FromGnarkBN254(pk); err == nil {
			digest, err = keyfile.Write(outPath, k)
		}
	}
	if err != nil {
		return [32]byte{}, fmt.Errorf("converting %s: %w", gnarkPKPath, err)
	}
	return digest, nil
}

// gnarkKeyCurve tells the curve of a gnark proving key file from its first 40 bytes,
// without decoding it (a wrong curve's decoder would build the domain's tables, 4·N
// scalars, before its first point failed): gnark writes the key's FFT domain first,
// its size N (uint64, big-endian) and then 1/N in the scalar field (32 bytes,
// big-endian), and N·(1/N) ≡ 1 holds modulo one curve's r only.
func gnarkKeyCurve(path string) (ecc.ID, error) {
	f, err := os.Open(path)
	if err != nil {
		return ecc.UNKNOWN, fmt.Errorf("keyconv: convert: %w", err)
	}
	defer f.Close()
	var head [8 + 32]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return ecc.UNKNOWN, fmt.Errorf("keyconv: convert: %s is not a gnark proving key: %d bytes are too few for its domain's header", path, len(head))
	}
	n := new(big.Int).SetUint64(binary.BigEndian.Uint64(head[:8]))
	inv := new(big.Int).SetBytes(head[8:])
	for _, id := range curve.IDs {
		r := id.ScalarField()
		if inv.Cmp(r) < 0 && new(big.Int).Mod(new(big.Int).Mul(n, inv), r).Cmp(big.NewInt(1)) == 0 {
			return id, nil
		}
	}
	return ecc.UNKNOWN, fmt.Errorf("keyconv: convert: %s is not a gnark proving key of BLS12-381 or BN254: its domain's size %d and inverse agree in neither scalar field", path, n)
}

// readGnarkKey decodes a gnark proving key file of curve id. gnark's decoder trusts
// the sizes it reads (a bad domain size panics while precomputing twiddles), so the
// domain size is checked first and any remaining decoder panic becomes an error.
func readGnarkKey(path string, id ecc.ID) (pk groth16.ProvingKey, err error) {
	title := curve.Title(id)
	in, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keyconv: convert: %w", err)
	}
	defer in.Close()
	br := bufio.NewReaderSize(in, 1<<20)
	head, err := br.Peek(8)
	if err != nil {
		return nil, fmt.Errorf("keyconv: convert: %s is not a gnark %s proving key: %w", path, title, err)
	}
	// gnark writes the domain's cardinality first, as a big-endian uint64.
	card := binary.BigEndian.Uint64(head)
	if maxLog := curve.TwoAdicity(id); card == 0 || card&(card-1) != 0 || card > 1<<maxLog {
		return nil, fmt.Errorf("keyconv: convert: %s is not a gnark %s proving key: domain size %d is not a power of two up to 2^%d", path, title, card, maxLog)
	}
	defer func() {
		if r := recover(); r != nil {
			pk, err = nil, fmt.Errorf("keyconv: convert: %s is not a valid gnark %s proving key: decoder failed: %v", path, title, r)
		}
	}()
	pk = groth16.NewProvingKey(id)
	// gnark's decoder reads each point's flag bits, so one call reads both encodings.
	if _, err := pk.ReadFrom(br); err != nil {
		return nil, fmt.Errorf("keyconv: convert: %s is not a gnark %s proving key: %w", path, title, err)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("keyconv: convert: %s has trailing bytes after the %s proving key", path, title)
	}
	return pk, nil
}

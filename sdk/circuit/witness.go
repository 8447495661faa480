package circuit

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk/circuits"
)

// ExtWitness is the file name extension of witness files.
const ExtWitness = ".wtns"

// WitnessPath returns the path of partition i's witness file in dir: dir/<i>.wtns.
func WitnessPath(dir string, i int) string {
	return filepath.Join(dir, strconv.Itoa(i)+ExtWitness)
}

// WriteWitnesses writes the witnesses of partitions 0..n-1 of spec, generated with seed 0,
// to dir/<i>.wtns (gnark's full-witness binary encoding); see WriteWitnessesSeed.
func WriteWitnesses(spec circuits.Spec, n int, dir string) error {
	return WriteWitnessesSeed(spec, n, 0, dir)
}

// WriteWitnessesSeed writes the witnesses of partitions 0..n-1 of spec, generated with
// seed, to dir/<i>.wtns (gnark's full witness MarshalBinary: public and secret counts as
// big-endian uint32, then the vector). dir is created if missing. Each file is written to
// a temporary name and renamed, so a reader never sees a partial witness.
func WriteWitnessesSeed(spec circuits.Spec, n int, seed uint64, dir string) error {
	if n < 1 {
		return fmt.Errorf("circuit: witnesses for %s: n = %d, want at least 1", spec.ID(), n)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("circuit: witnesses for %s: %w", spec.ID(), err)
	}
	for i := range n {
		w, err := spec.Witness(i, seed)
		if err != nil {
			return fmt.Errorf("circuit: witness %d of %s: %w", i, spec.ID(), err)
		}
		b, err := w.MarshalBinary()
		if err != nil {
			return fmt.Errorf("circuit: witness %d of %s: %w", i, spec.ID(), err)
		}
		if err := writeAtomic(WitnessPath(dir, i), b); err != nil {
			return fmt.Errorf("circuit: witness %d of %s: %w", i, spec.ID(), err)
		}
	}
	return nil
}

// writeAtomic writes data to path through a temporary file in the same directory.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}

// witnessHeader is the size of a full witness file's header: public count, secret count
// and the vector's length, each a big-endian uint32.
const witnessHeader = 12

// ReadWitness reads a full witness file (gnark's MarshalBinary) for circuit c. It refuses
// a file whose size does not fit 32-byte elements (another field, or truncated), values
// that are not canonical BLS12-381 scalars, and a witness whose number of public or
// secret values is not the circuit's; errors name the file and the counts.
func ReadWitness(path string, c *Circuit) (witness.Witness, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("circuit: %w", err)
	}
	w, err := ParseWitness(data, c)
	if err != nil {
		return nil, fmt.Errorf("circuit: witness %s %w", path, err)
	}
	return w, nil
}

// ParseWitness decodes a full witness (gnark's MarshalBinary) for circuit c, with the
// checks ReadWitness documents; the daemon uses it on witnesses submitted over its API.
func ParseWitness(data []byte, c *Circuit) (witness.Witness, error) {
	if len(data) < witnessHeader {
		return nil, fmt.Errorf("is truncated: %d bytes, shorter than the %d-byte header", len(data), witnessHeader)
	}
	nbPublic := binary.BigEndian.Uint32(data[0:])
	nbSecret := binary.BigEndian.Uint32(data[4:])
	nbValues := binary.BigEndian.Uint32(data[8:])
	if uint64(nbValues) != uint64(nbPublic)+uint64(nbSecret) {
		return nil, fmt.Errorf("is malformed: header says %d public + %d secret values but the vector has %d", nbPublic, nbSecret, nbValues)
	}
	if want := witnessHeader + uint64(nbValues)*fr.Bytes; uint64(len(data)) != want {
		return nil, fmt.Errorf("has %d bytes, want %d for %d scalars of %d bytes (a witness of another field, or truncated)", len(data), want, nbValues, fr.Bytes)
	}
	// The witness excludes the constant-1 wire, which the circuit counts as public.
	if wantPub, wantSec := c.NbPublic-1, c.NbSecret; int(nbPublic) != wantPub || int(nbSecret) != wantSec {
		return nil, fmt.Errorf("has %d public and %d secret values, circuit %s wants %d public and %d secret", nbPublic, nbSecret, c.Name, wantPub, wantSec)
	}
	w, err := witness.New(c.field())
	if err != nil {
		return nil, fmt.Errorf("cannot be decoded: %w", err)
	}
	if err := w.UnmarshalBinary(data); err != nil {
		return nil, fmt.Errorf("is not a %s witness: %w", c.curveTitle(), err)
	}
	return w, nil
}

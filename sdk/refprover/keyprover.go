package refprover

import (
	"bytes"
	"context"
	"fmt"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
)

// KeyProver proves with the key of one key file, on the curve its header names: the
// one place where a backend's curve-blind code (a partition's bytes in, a proof's
// encoding out) meets the generic prover. A backend keeps one per loaded key.
type KeyProver struct {
	curve ecc.ID
	// domain is the key's *FFTDomain, held so that the domain cache keeps it while
	// the key is loaded.
	domain any
	prove  func(ctx context.Context, w, a, b []byte, threads int) ([]byte, Timings, error)
}

// NewKeyProver returns the prover of kf's key and builds (and holds) its FFT domain
// (DomainBytes(DomainSize) of memory). kf must stay open while the prover is used.
func NewKeyProver(kf *keyfile.File) (*KeyProver, error) {
	switch kf.Curve() {
	case ecc.BLS12_381:
		return newKeyProver(curve.BLS12381{}, kf.BLS12381)
	case ecc.BN254:
		return newKeyProver(curve.BN254{}, kf.BN254)
	}
	return nil, sdk.Errorf(sdk.ErrUnimplemented, "refprover: no prover for %s keys", curve.Name(kf.Curve()))
}

func newKeyProver[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], key func() (*keyfile.ProvingKey[G1, G2], error)) (*KeyProver, error) {
	pk, err := key()
	if err != nil {
		return nil, err
	}
	domain, err := KeyDomain[S, PS](c, pk)
	if err != nil {
		return nil, err
	}
	return &KeyProver{
		curve:  c.ID(),
		domain: domain,
		prove: func(ctx context.Context, w, a, b []byte, threads int) ([]byte, Timings, error) {
			var vectors [3][]S
			for i, v := range [][]byte{w, a, b} {
				var err error // this call's own: proofs may run at once
				if vectors[i], err = ScalarsOf[S](v); err != nil {
					return nil, Timings{}, err
				}
			}
			proof, timings, err := Prove[S, PS](ctx, c, pk, vectors[0], vectors[1], vectors[2], threads)
			if err != nil {
				return nil, timings, err
			}
			var buf bytes.Buffer
			if _, err := proof.WriteTo(&buf); err != nil {
				return nil, timings, fmt.Errorf("refprover: encoding the proof: %w", err)
			}
			return buf.Bytes(), timings, nil
		},
	}, nil
}

// Curve returns the key's curve.
func (p *KeyProver) Curve() ecc.ID { return p.curve }

// Prove proves the partition whose W, A and B vectors are w, a and b: the raw bytes
// of 32-byte scalars of the key's curve (Montgomery form, gnark-crypto's layout, as a
// partition file holds them), only read. It returns the proof's encoding
// (sdk.Proof.WriteTo) and Prove's timings.
func (p *KeyProver) Prove(ctx context.Context, w, a, b []byte, threads int) ([]byte, Timings, error) {
	return p.prove(ctx, w, a, b, threads)
}

// ScalarsOf views b, the raw bytes of scalars S in memory (sdk.ElementSize each), as
// a slice, without copying; nil stays nil. b must be 8-byte aligned, as a partition's
// sections and ScalarMemory's are.
func ScalarsOf[S any](b []byte) ([]S, error) {
	if b == nil {
		return nil, nil
	}
	size := int(unsafe.Sizeof(*new(S)))
	if len(b)%size != 0 {
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "refprover: %d bytes are not a whole number of %d-byte scalars", len(b), size)
	}
	if len(b) == 0 {
		return []S{}, nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil, sdk.Errorf(sdk.ErrInvalidArgument, "refprover: scalars at a misaligned address")
	}
	return unsafe.Slice((*S)(unsafe.Pointer(&b[0])), len(b)/size), nil
}

// ScalarMemory returns zeroed memory for n scalars of either curve (32 bytes each),
// 8-byte aligned as ScalarsOf needs: a partition's vectors outside a partition file.
func ScalarMemory(n int) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(make([]uint64, 4*n)))), 32*n)
}

// ScalarBytes is the raw memory of v, aliasing it: what ScalarsOf views back.
func ScalarBytes[S any](v []S) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), uintptr(len(v))*unsafe.Sizeof(v[0]))
}

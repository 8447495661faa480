package refprover

import (
	"context"
	"fmt"
	"math/big"
	"runtime"
	"sync"
	"weak"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/zkhost/zkhost/sdk"
)

// maxLogDomain is the 2-adicity of BLS12-381's scalar field: the largest FFT domain
// is 2^32 elements.
const maxLogDomain = 32

// domains caches FFT domains by size. Entries are weak: a domain stays cached while
// some caller (a loaded key, a running proof) holds it, and is collected after.
var domains = struct {
	sync.Mutex
	m map[uint64]weak.Pointer[fft.Domain]
}{m: map[uint64]weak.Pointer[fft.Domain]{}}

// DomainBytes is the memory a cached Domain of size n keeps resident: twiddles and
// inverse twiddles (about n elements each) and the coset tables (n elements each),
// 32 bytes per element.
func DomainBytes(n uint64) uint64 { return 4 * n * fr.Bytes }

// Domain returns the FFT domain of size n as gnark's setup builds it
// (fft.NewDomain(n): generator 7 for the coset, twiddles and coset tables
// precomputed, DomainBytes(n) of memory). Domains are shared and read-only; one stays
// cached while any caller holds it, so a backend that holds its key's domain never
// rebuilds it. n must be a power of two between 1 and 2^32.
func Domain(n uint64) (*fft.Domain, error) {
	return cachedDomain(domains.m, n, func() *fft.Domain { return fft.NewDomain(n) })
}

// cachedDomain returns the domain of size n that cache holds, or one made by
// build, which it then holds. domains's mutex guards every cache, Domain's and
// SnarkjsDomain's.
func cachedDomain(cache map[uint64]weak.Pointer[fft.Domain], n uint64, build func() *fft.Domain) (*fft.Domain, error) {
	if err := checkDomainSize(n); err != nil {
		return nil, err
	}
	domains.Lock()
	defer domains.Unlock()
	if d := cache[n].Value(); d != nil {
		return d, nil
	}
	d := build()
	cache[n] = weak.Make(d)
	return d, nil
}

// ComputeH returns the coefficients of H = (A·B − C)/Z, in the order gnark's prover
// leaves them (bit-reversed, matching the key's bit-reversed G1Z), equal element for
// element to gnark v0.14.0's computeH.
//
// a and b are the evaluations of the A and B polynomials at the constraints
// (len(a) == len(b) ≤ domainSize); they are only read. C is not an input: for a
// satisfied R1CS, C equals A∘B at every constraint, so it is computed here. The inputs
// are padded with zeros to domainSize, as gnark pads them.
//
// Cost: 7 FFTs of size N = domainSize (3 inverse, 3 forward on the coset, 1 inverse on
// the coset) and 3N multiplications, on threads goroutines (0 means all cores).
// Memory: 2N elements (64 bytes per domain element), the result and one scratch
// vector; gnark uses 3N because it also keeps C. The context is checked between
// FFTs; a cancelled context returns an error wrapping ctx.Err().
func ComputeH(ctx context.Context, a, b []fr.Element, domainSize uint64, threads int) ([]fr.Element, error) {
	if err := checkAB(a, b, domainSize); err != nil {
		return nil, err
	}
	domain, err := Domain(domainSize)
	if err != nil {
		return nil, err
	}
	threads = threadCount(threads)
	opt := fft.WithNbTasks(threads)
	n := int(domainSize)

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("refprover: computing H: %w", err)
	}
	h := make([]fr.Element, n) // A's coset evaluations, then the result
	t := make([]fr.Element, n) // B's coset evaluations, then C's
	copy(h, a)
	copy(t, b)
	if err := productOnCoset(ctx, domain, h, t, threads, opt); err != nil {
		return nil, err
	}
	// C = A∘B at the constraints, zero in the padding (A and B are zero there too).
	parallelize(n, threads, func(start, end int) {
		for i := start; i < end; i++ {
			if i < len(a) {
				t[i].Mul(&a[i], &b[i])
			} else {
				t[i].SetZero()
			}
		}
	})
	if err := toCoset(ctx, domain, t, "C", opt); err != nil {
		return nil, err
	}

	// Z(x) = xᴺ − 1 is the constant gᴺ − 1 on the coset g·<ω>: divide by it.
	var den, one fr.Element
	one.SetOne()
	den.Exp(domain.FrMultiplicativeGen, new(big.Int).SetUint64(domainSize))
	den.Sub(&den, &one).Inverse(&den)
	parallelize(n, threads, func(start, end int) {
		for i := start; i < end; i++ {
			h[i].Sub(&h[i], &t[i]).Mul(&h[i], &den)
		}
	})
	domain.FFTInverse(h, fft.DIF, fft.OnCoset(), opt)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("refprover: computing H (after the inverse coset FFT): %w", err)
	}
	return h, nil
}

// productOnCoset sets a to the product of a's and b's values on the domain's coset,
// a and b given as their values on the domain (A and B, named so in errors); b is
// left holding its coset values.
func productOnCoset(ctx context.Context, domain *fft.Domain, a, b []fr.Element, threads int, opt fft.Option) error {
	if err := toCoset(ctx, domain, a, "A", opt); err != nil {
		return err
	}
	if err := toCoset(ctx, domain, b, "B", opt); err != nil {
		return err
	}
	parallelize(len(a), threads, func(start, end int) {
		for i := start; i < end; i++ {
			a[i].Mul(&a[i], &b[i])
		}
	})
	return nil
}

// checkAB checks A and B for computing H over a domain of domainSize: equal
// lengths, not empty, no longer than the domain.
func checkAB(a, b []fr.Element, domainSize uint64) error {
	if len(a) != len(b) {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: len(A) = %d differs from len(B) = %d", len(a), len(b))
	}
	if len(a) == 0 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: no constraints (A and B are empty)")
	}
	if uint64(len(a)) > domainSize {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: %d constraints do not fit the domain of size %d", len(a), domainSize)
	}
	return nil
}

// toCoset turns evaluations on the domain into evaluations on its coset (the
// domain's points times its shift), as gnark does: inverse FFT (natural in,
// bit-reversed out), then forward FFT on the coset (bit-reversed in, natural out).
// The context is checked after each; name says which vector, in its errors.
func toCoset(ctx context.Context, domain *fft.Domain, v []fr.Element, name string, opt fft.Option) error {
	domain.FFTInverse(v, fft.DIF, opt)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("refprover: computing H (after the inverse FFT of %s): %w", name, err)
	}
	domain.FFT(v, fft.DIT, fft.OnCoset(), opt)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("refprover: computing H (after the coset FFT of %s): %w", name, err)
	}
	return nil
}

// checkDomainSize refuses a domain size that is not a power of two between 1 and
// 2^32.
func checkDomainSize(n uint64) error {
	if n == 0 || n&(n-1) != 0 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: domain size %d is not a power of two", n)
	}
	if n > 1<<maxLogDomain {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: domain size %d exceeds 2^%d, the largest BLS12-381 FFT domain", n, maxLogDomain)
	}
	return nil
}

// threadCount maps 0 (or less) to all cores.
func threadCount(threads int) int {
	if threads <= 0 {
		return runtime.NumCPU()
	}
	return threads
}

// parallelize runs work over [0, n) split into at most threads contiguous ranges and
// waits for them.
func parallelize(n, threads int, work func(start, end int)) {
	if threads > n {
		threads = n
	}
	if threads <= 1 {
		work(0, n)
		return
	}
	chunk := (n + threads - 1) / threads
	var wg sync.WaitGroup
	for start := 0; start < n; start += chunk {
		end := min(start+chunk, n)
		wg.Go(func() {
			work(start, end)
		})
	}
	wg.Wait()
}

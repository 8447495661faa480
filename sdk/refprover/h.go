package refprover

import (
	"context"
	"fmt"
	"math/big"
	"runtime"
	"sync"
	"weak"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
)

// FFTDomain is a cached FFT domain of a curve's scalar field. Domains are shared and
// read-only; one stays cached while any caller holds its *FFTDomain.
type FFTDomain[S any] struct{ curve.Domain[S] }

// domainKey names a cached domain: its curve, size and coset (gnark's or snarkjs's).
type domainKey struct {
	curve   ecc.ID
	n       uint64
	snarkjs bool
}

// domains caches FFT domains. Entries are weak (a weak.Pointer[FFTDomain[S]] for the
// curve's S): a domain stays cached while some caller (a loaded key, a running proof)
// holds it, and is collected after. building holds a channel per domain being built,
// closed when it is cached, so that a caller of the same domain waits for it rather than
// building it again, and callers of other domains do not wait for a build that is
// not theirs.
var domains = struct {
	sync.Mutex
	m        map[domainKey]any
	building map[domainKey]chan struct{}
}{m: map[domainKey]any{}, building: map[domainKey]chan struct{}{}}

// DomainBytes is the memory a cached Domain of size n keeps resident
// (curve.DomainBytes).
func DomainBytes(n uint64) uint64 { return curve.DomainBytes(n) }

// Domain returns the FFT domain of size n as gnark's setup builds it
// (fft.NewDomain(n): the field's smallest generator for the coset, twiddles and coset
// tables precomputed, DomainBytes(n) of memory). Domains are shared and read-only;
// one stays cached while any caller holds it, so a backend that holds its key's domain
// never rebuilds it. n must be a power of two, at most 2^(the field's two-adicity).
func Domain[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], n uint64) (*FFTDomain[S], error) {
	return cachedDomain(c.ID(), domainKey{c.ID(), n, false}, func() curve.Domain[S] { return c.NewDomain(n, nil) })
}

// cachedDomain returns the domain that the cache holds for key, or one made by
// build, which it then holds.
func cachedDomain[S any](id ecc.ID, key domainKey, build func() curve.Domain[S]) (*FFTDomain[S], error) {
	if err := checkDomainSize(id, key.n); err != nil {
		return nil, err
	}
	for {
		domains.Lock()
		if w, ok := domains.m[key].(weak.Pointer[FFTDomain[S]]); ok {
			if d := w.Value(); d != nil {
				domains.Unlock()
				return d, nil
			}
		}
		if ch, ok := domains.building[key]; ok {
			domains.Unlock()
			<-ch
			continue // cached now, unless already collected: then built again
		}
		ch := make(chan struct{})
		domains.building[key] = ch
		domains.Unlock()

		return buildDomain(key, ch, build), nil
	}
}

// buildDomain builds the domain of key, caches it and closes ch, the channel its
// waiters wait on: also when build panics, so that they do not wait for ever.
func buildDomain[S any](key domainKey, ch chan struct{}, build func() curve.Domain[S]) (d *FFTDomain[S]) {
	defer func() {
		domains.Lock()
		if d != nil {
			domains.m[key] = weak.Make(d)
		}
		delete(domains.building, key)
		domains.Unlock()
		close(ch)
	}()
	return &FFTDomain[S]{build()}
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
func ComputeH[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](ctx context.Context, c curve.Curve[S, G1, G1J, G2, G2J], a, b []S, domainSize uint64, threads int) ([]S, error) {
	if err := checkAB(a, b, domainSize); err != nil {
		return nil, err
	}
	domain, err := Domain(c, domainSize)
	if err != nil {
		return nil, err
	}
	threads = threadCount(threads)
	n := int(domainSize)

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("refprover: computing H: %w", err)
	}
	h := make([]S, n) // A's coset evaluations, then the result
	t := make([]S, n) // B's coset evaluations, then C's
	copy(h, a)
	copy(t, b)
	if err := productOnCoset[S, PS](ctx, domain, h, t, threads); err != nil {
		return nil, err
	}
	// C = A∘B at the constraints, zero in the padding (A and B are zero there too).
	parallelize(n, threads, func(start, end int) {
		for i := start; i < end; i++ {
			if i < len(a) {
				PS(&t[i]).Mul(&a[i], &b[i])
			} else {
				PS(&t[i]).SetZero()
			}
		}
	})
	if err := toCoset(ctx, domain, t, "C", threads); err != nil {
		return nil, err
	}

	// Z(x) = xᴺ − 1 is the constant gᴺ − 1 on the coset g·<ω>: divide by it.
	var den, one S
	PS(&one).SetOne()
	PS(&den).Exp(domain.Shift(), new(big.Int).SetUint64(domainSize))
	PS(&den).Sub(&den, &one)
	PS(&den).Inverse(&den)
	parallelize(n, threads, func(start, end int) {
		for i := start; i < end; i++ {
			PS(&h[i]).Sub(&h[i], &t[i])
			PS(&h[i]).Mul(&h[i], &den)
		}
	})
	curve.Inverse(domain, h, true, threads)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("refprover: computing H (after the inverse coset FFT): %w", err)
	}
	return h, nil
}

// productOnCoset sets a to the product of a's and b's values on the domain's coset,
// a and b given as their values on the domain (A and B, named so in errors); b is
// left holding its coset values.
func productOnCoset[S any, PS curve.Scalar[S]](ctx context.Context, domain *FFTDomain[S], a, b []S, threads int) error {
	if err := toCoset(ctx, domain, a, "A", threads); err != nil {
		return err
	}
	if err := toCoset(ctx, domain, b, "B", threads); err != nil {
		return err
	}
	parallelize(len(a), threads, func(start, end int) {
		for i := start; i < end; i++ {
			PS(&a[i]).Mul(&a[i], &b[i])
		}
	})
	return nil
}

// checkAB checks A and B for computing H over a domain of domainSize: equal
// lengths, not empty, no longer than the domain.
func checkAB[S any](a, b []S, domainSize uint64) error {
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
func toCoset[S any](ctx context.Context, domain *FFTDomain[S], v []S, name string, threads int) error {
	curve.Inverse(domain, v, false, threads)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("refprover: computing H (after the inverse FFT of %s): %w", name, err)
	}
	curve.Forward(domain, v, true, threads)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("refprover: computing H (after the coset FFT of %s): %w", name, err)
	}
	return nil
}

// checkDomainSize refuses a domain size that is not a power of two between 1 and
// 2^s, s the two-adicity of the curve's scalar field (32 on BLS12-381, 28 on BN254).
func checkDomainSize(id ecc.ID, n uint64) error {
	if n == 0 || n&(n-1) != 0 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: domain size %d is not a power of two", n)
	}
	if s := curve.TwoAdicity(id); n > 1<<s {
		return sdk.Errorf(sdk.ErrInvalidArgument, "refprover: domain size %d exceeds 2^%d, the largest %s FFT domain", n, s, curve.Name(id))
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

//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/refprover/gnarkref"
)

// needDevice skips the test when no GPU is usable, unless ZK_REQUIRE_GPU=1
// (scripts/gpu-run.sh sets it), where a missing GPU is a failure.
func needDevice(tb testing.TB) {
	tb.Helper()
	if _, err := DeviceCount(); err != nil {
		if os.Getenv("ZK_REQUIRE_GPU") == "1" {
			tb.Fatalf("no usable GPU: %v", err)
		}
		tb.Skipf("no usable GPU: %v", err)
	}
}

// randFr returns n pseudo-random canonical field elements (fast; the
// limbs are drawn directly, the top one below the modulus's).
func randFr(rng *rand.Rand, n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		for {
			v[i] = fr.Element{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64() >> 1}
			if v[i][3] < frTop {
				break
			}
		}
	}
	return v
}

func pMinus1Fr() fr.Element {
	var m fr.Element
	m.SetOne()
	m.Neg(&m)
	return m
}

func fillFr[E any](n int, v E) []E {
	s := make([]E, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func firstDiff[E comparable](a, b []E) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestNoDeviceIsAnError runs where no GPU is usable (this is how CI and
// developer machines see the cuda build) and checks the answer is a clear
// ErrUnavailable, not a crash.
func TestNoDeviceIsAnError(t *testing.T) {
	if _, err := DeviceCount(); err == nil {
		t.Skip("a GPU is present")
	}
	_, err := DeviceInfo(0)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("DeviceInfo without a GPU: %v, want ErrUnavailable", err)
	}
	t.Logf("DeviceInfo without a GPU: %v", err)
	if _, err := ComputeH(make([]fr.Element, 4), make([]fr.Element, 4), 2); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("ComputeH without a GPU: %v, want ErrUnavailable", err)
	}
}

// TestDomainBytesMatchesC keeps the Go size formula equal to the library's.
func TestDomainBytesMatchesC(t *testing.T) {
	for l := 0; l <= MaxLogN; l++ {
		if g, c := DomainBytes(l), domainBytesC(l); g != c {
			t.Errorf("logN %d: DomainBytes %d, C %d", l, g, c)
		}
	}
}

func TestDeviceInfo(t *testing.T) {
	needDevice(t)
	p, err := DeviceInfo(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("device 0: %s, cc %d.%d, %d SMs, %.1f GiB (%.1f free), driver %d, runtime %d",
		p.Model, p.CCMajor, p.CCMinor, p.SMCount, float64(p.TotalBytes)/(1<<30),
		float64(p.FreeBytes)/(1<<30), p.DriverVersion, p.RuntimeVersion)
	if p.Model == "" || p.TotalBytes == 0 || p.SMCount == 0 || p.FreeBytes > p.TotalBytes {
		t.Errorf("implausible properties: %+v", p)
	}
	if _, err := DeviceInfo(1 << 20); !errors.Is(err, ErrUnavailable) {
		t.Errorf("DeviceInfo(huge ordinal) = %v, want ErrUnavailable", err)
	}
}

// TestFieldOps checks fr and fq arithmetic on the device (field.cuh) against
// gnark-crypto on random and edge values.
func TestFieldOps(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(1, 2))

	// fr: edge values paired with every other edge value, then random pairs.
	var one, two, pm1 fr.Element
	one.SetOne()
	two.SetUint64(2)
	pm1 = pMinus1Fr()
	edges := []fr.Element{{}, one, two, pm1, fr.Element{1, 0, 0, 0}, fr.Element{^uint64(0) >> 1, ^uint64(0), ^uint64(0), frTop - 1}}
	var a, b []fr.Element
	for _, x := range edges {
		for _, y := range edges {
			a, b = append(a, x), append(b, y)
		}
	}
	a = append(a, randFr(rng, 1<<14)...)
	b = append(b, randFr(rng, 1<<14)...)
	// Deliberately parallel to fqOps below: fr and fp are gnark-crypto types
	// with no common interface, and a failure should name its field.
	frOps := []struct {
		name string
		op   int
		ref  func(x, y fr.Element) fr.Element
	}{
		{"add", 0, func(x, y fr.Element) fr.Element { var r fr.Element; r.Add(&x, &y); return r }},
		{"sub", 1, func(x, y fr.Element) fr.Element { var r fr.Element; r.Sub(&x, &y); return r }},
		{"mul", 2, func(x, y fr.Element) fr.Element { var r fr.Element; r.Mul(&x, &y); return r }},
		{"sqr", 3, func(x, y fr.Element) fr.Element { var r fr.Element; r.Square(&x); return r }},
		{"neg", 4, func(x, y fr.Element) fr.Element { var r fr.Element; r.Neg(&x); return r }},
		{"inverse", 5, func(x, y fr.Element) fr.Element { var r fr.Element; r.Inverse(&x); return r }},
		{"mul_ref", 6, func(x, y fr.Element) fr.Element { var r fr.Element; r.Mul(&x, &y); return r }},
		{"from_montgomery", 7, func(x, y fr.Element) fr.Element { return fr.Element(x.Bits()) }},
		{"to_montgomery", 8, func(x, y fr.Element) fr.Element {
			var r fr.Element
			r.SetBigInt(new(big.Int).SetBits(bigWords(x[:])))
			return r
		}},
		{"dbl", 9, func(x, y fr.Element) fr.Element { var r fr.Element; r.Double(&x); return r }},
	}
	for _, c := range frOps {
		checkFieldOp(t, "fr", 0, c.name, c.op, a, b, c.ref)
	}

	// fq (the MSM's field): same checks against gnark's fp.
	var qone, qpm1 fp.Element
	qone.SetOne()
	qpm1.Neg(&qone)
	qedges := []fp.Element{{}, qone, qpm1, {1, 0, 0, 0, 0, 0}}
	var qa, qb []fp.Element
	for _, x := range qedges {
		for _, y := range qedges {
			qa, qb = append(qa, x), append(qb, y)
		}
	}
	for i := 0; i < 1<<13; i++ {
		var x, y fp.Element
		x.SetRandom()
		y.SetRandom()
		qa, qb = append(qa, x), append(qb, y)
	}
	// Deliberately parallel to frOps above: see why there.
	fqOps := []struct {
		name string
		op   int
		ref  func(x, y fp.Element) fp.Element
	}{
		{"add", 0, func(x, y fp.Element) fp.Element { var r fp.Element; r.Add(&x, &y); return r }},
		{"sub", 1, func(x, y fp.Element) fp.Element { var r fp.Element; r.Sub(&x, &y); return r }},
		{"mul", 2, func(x, y fp.Element) fp.Element { var r fp.Element; r.Mul(&x, &y); return r }},
		{"sqr", 3, func(x, y fp.Element) fp.Element { var r fp.Element; r.Square(&x); return r }},
		{"neg", 4, func(x, y fp.Element) fp.Element { var r fp.Element; r.Neg(&x); return r }},
		{"inverse", 5, func(x, y fp.Element) fp.Element { var r fp.Element; r.Inverse(&x); return r }},
		{"mul_ref", 6, func(x, y fp.Element) fp.Element { var r fp.Element; r.Mul(&x, &y); return r }},
		{"dbl", 9, func(x, y fp.Element) fp.Element { var r fp.Element; r.Double(&x); return r }},
	}
	for _, c := range fqOps {
		checkFieldOp(t, "fq", 1, c.name, c.op, qa, qb, c.ref)
	}
}

// checkFieldOp runs operation op of field (0: fr, 1: fq, as fieldOp numbers
// them) on the device over a and b, and checks each result against ref,
// printing the first three that differ and how many did.
func checkFieldOp[E comparable](t *testing.T, fieldName string, field int, name string, op int, a, b []E, ref func(x, y E) E) {
	t.Helper()
	out := make([]E, len(a))
	if err := fieldOp(0, field, op, unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]), unsafe.Pointer(&out[0]), len(a)); err != nil {
		t.Fatalf("%s %s: %v", fieldName, name, err)
	}
	bad := 0
	for i := range a {
		if want := ref(a[i], b[i]); out[i] != want {
			if bad < 3 {
				// &a[i]: fr's and fp's String has a pointer receiver.
				t.Errorf("%s %s(%v, %v) = %v, want %v", fieldName, name, &a[i], &b[i], out[i], want)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s %s: %d of %d wrong", fieldName, name, bad, len(a))
	}
}

// bigWords turns little-endian uint64 limbs into big.Int words.
func bigWords(l []uint64) []big.Word {
	w := make([]big.Word, len(l))
	for i, v := range l {
		w[i] = big.Word(v)
	}
	return w
}

type nttMode struct {
	dir   Direction
	dec   Decimation
	coset bool
}

func (m nttMode) String() string {
	d := map[Direction]string{Forward: "fwd", Inverse: "inv"}[m.dir]
	e := map[Decimation]string{DIT: "DIT", DIF: "DIF"}[m.dec]
	if m.coset {
		return d + "-" + e + "-coset"
	}
	return d + "-" + e
}

var allModes = func() []nttMode {
	var ms []nttMode
	for _, dir := range []Direction{Forward, Inverse} {
		for _, dec := range []Decimation{DIF, DIT} {
			for _, c := range []bool{false, true} {
				ms = append(ms, nttMode{dir, dec, c})
			}
		}
	}
	return ms
}()

// gnarkDomain returns, for a size n, gnark-crypto's fft.NewDomain(n) of the field
// that c binds (sdk/curve) as a transform: it applies mode m to a (n elements) in
// place, the reference the GPU's transforms are compared with.
func gnarkDomain[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J]) func(n int) func(a []S, m nttMode) {
	return func(n int) func(a []S, m nttMode) {
		d := c.NewDomain(uint64(n), nil)
		return func(a []S, m nttMode) { d.Transform(a, m.dir == Inverse, m.dec == DIF, m.coset, runtime.NumCPU()) }
	}
}

// nttField is what the NTT tests need of one scalar field: random elements,
// the edge values, and gnark-crypto's transform (the reference) on a domain
// of a size.
type nttField[E Fr] struct {
	name          string
	random        func(rng *rand.Rand, n int) []E
	one, minusOne E
	// domain returns gnark-crypto's fft.NewDomain(n) as a transform: it
	// applies mode m to a (n elements) in place.
	domain func(n int) func(a []E, m nttMode)
}

// blsNTT is BLS12-381's scalar field (ntt_bn254_test.go has BN254's).
var blsNTT = nttField[fr.Element]{
	name:     "BLS12-381",
	random:   randFr,
	one:      frOf(1),
	minusOne: frOf(-1),
	domain:   gnarkDomain(curve.BLS12381{}),
}

// TestNTTMatchesGnark compares every transform mode with gnark-crypto's
// fft.Domain at the sizes the prover uses, on random and edge inputs.
func TestNTTMatchesGnark(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(3, 4))
	logs := []int{0, 1, 2, 3, 5, 8, 10, 11, 12, 13, 16, 17, 19, 20, 22}
	if testing.Short() {
		logs = []int{0, 1, 5, 10, 12}
	}
	for _, radix := range []NTTRadix{NTTRadix2, NTTRadix4, NTTRadixDefault} {
		t.Logf("radix %d", radix)
		nttMatchesGnark(t, blsNTT, rng, logs, radix)
	}
}

// nttMatchesGnark runs NTT in every mode at 2^logN for each of logs, on
// random inputs and, at 2^10, 2^12 and 2^16, on the edge inputs (zeros,
// ones, p-1, a delta at the last index), and compares each result with
// gnark-crypto's.
func nttMatchesGnark[E Fr](t *testing.T, f nttField[E], rng *rand.Rand, logs []int, radix NTTRadix) {
	for _, logN := range logs {
		n := 1 << logN
		d := f.domain(n)
		inputs := map[string][]E{"random": f.random(rng, n)}
		if logN == 10 || logN == 12 || logN == 16 {
			inputs["zeros"] = make([]E, n)
			inputs["ones"] = fillFr(n, f.one)
			inputs["p-1"] = fillFr(n, f.minusOne)
			delta := make([]E, n)
			delta[n-1] = f.one
			inputs["delta"] = delta
		}
		for name, in := range inputs {
			for _, m := range allModes {
				want := append([]E(nil), in...)
				d(want, m)
				got := append([]E(nil), in...)
				if err := NTT(0, got, m.dir, m.dec, m.coset, radix); err != nil {
					t.Fatalf("%s 2^%d %s %s: %v", f.name, logN, name, m, err)
				}
				if i := firstDiff(got, want); i >= 0 {
					// &got[i]: fr.Element's String has a pointer receiver.
					t.Errorf("%s 2^%d %s %s radix %d: first difference at %d: got %v want %v", f.name, logN, name, m, radix, i, &got[i], &want[i])
				}
			}
		}
	}
}

// frBytes is v's memory, for Buffer's byte copies (both fields' elements
// are FrBytes, in gnark-crypto's layout, which the kernels read).
func frBytes[E Fr](v []E) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*FrBytes)
}

// TestNTTDeviceRoundTrip runs the resident API on a stream: a forward then
// an inverse transform must give the input back, and equal the host API.
func TestNTTDeviceRoundTrip(t *testing.T) {
	nttDeviceRoundTrip(t, blsNTT, 5)
}

func nttDeviceRoundTrip[E Fr](t *testing.T, f nttField[E], seed uint64) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	const logN = 18
	in := f.random(rng, 1<<logN)
	s := newStream(t)
	buf := residentOf(t, in, s)
	if err := NTTDevice[E](buf, logN, Forward, DIF, true, NTTRadixDefault, s); err != nil {
		t.Fatal(err)
	}
	mid := make([]E, len(in))
	if err := buf.Download(frBytes(mid), 0, s); err != nil {
		t.Fatal(err)
	}
	want := append([]E(nil), in...)
	if err := NTT(0, want, Forward, DIF, true, NTTRadixDefault); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(mid, want); i >= 0 {
		t.Fatalf("%s: device and host transforms differ at %d", f.name, i)
	}
	if err := NTTDevice[E](buf, logN, Inverse, DIT, true, NTTRadixDefault, s); err != nil {
		t.Fatal(err)
	}
	out := make([]E, len(in))
	if err := buf.Download(frBytes(out), 0, s); err != nil {
		t.Fatal(err)
	}
	if i := firstDiff(out, in); i >= 0 {
		t.Fatalf("%s: inverse(forward(x)) != x at %d", f.name, i)
	}
}

// TestComputeHMatchesGnark compares ComputeH with gnark's computeH bit for
// bit, with and without padding, on random and edge inputs.
func TestComputeHMatchesGnark(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(7, 8))
	logs := []int{1, 2, 10, 12, 16, 20, 22}
	if testing.Short() {
		logs = []int{1, 2, 10, 12}
	}
	var one fr.Element
	one.SetOne()
	for _, logN := range logs {
		N := 1 << logN
		d := fft.NewDomain(uint64(N))
		type tc struct {
			name string
			a, b []fr.Element
		}
		cases := []tc{
			{"random-full", randFr(rng, N), randFr(rng, N)},
			{"random-padded", randFr(rng, N-N/3), randFr(rng, N-N/3)},
		}
		if logN <= 12 {
			cases = append(cases,
				tc{"zeros", make([]fr.Element, N), make([]fr.Element, N)},
				tc{"ones", fillFr(N, one), fillFr(N, one)},
				tc{"p-1", fillFr(N, pMinus1Fr()), fillFr(N, pMinus1Fr())},
				tc{"p-1*ones-padded", fillFr(N/2+1, pMinus1Fr()), fillFr(N/2+1, one)},
			)
		}
		for _, c := range cases {
			ab := make([]fr.Element, len(c.a))
			for i := range ab {
				ab[i].Mul(&c.a[i], &c.b[i])
			}
			want := gnarkref.ComputeH(c.a, c.b, ab, d)
			aIn := append([]fr.Element(nil), c.a...)
			got, tm, err := ComputeHOn(0, c.a, c.b, logN)
			if err != nil {
				t.Fatalf("2^%d %s: %v", logN, c.name, err)
			}
			if i := firstDiff(got, want); i >= 0 {
				t.Errorf("2^%d %s: first difference at %d: got %s want %s", logN, c.name, i, got[i].String(), want[i].String())
			}
			if firstDiff(aIn, c.a) >= 0 {
				t.Errorf("2^%d %s: ComputeH modified its input", logN, c.name)
			}
			if !got[N-1].IsZero() {
				t.Errorf("2^%d %s: h[N-1] = %s, want 0 (A·B-C divisible by Z)", logN, c.name, got[N-1].String())
			}
			if logN >= 20 {
				t.Logf("2^%d %s: device %v (upload %v, compute %v, download %v)", logN, c.name,
					tm.Total, tm.Upload, tm.Total-tm.Upload-tm.Download, tm.Download)
			}
		}
	}
}

// TestComputeHStreamMatchesGnark checks H out of core (the four-step
// transforms over blocks of whole rows or columns, what a key whose proofs
// stream computes) against gnark's computeH bit for bit: sizes with N1 = N2,
// N1 < N2 and the largest N1, blocks of one row or column (the smallest),
// twice that and the whole domain, inputs full and zero-padded; and that a
// block of the wrong size is refused.
func TestComputeHStreamMatchesGnark(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(9, 10))
	logs := []int{1, 2, 3, 9, 12, 15, 20, 22}
	if testing.Short() {
		logs = []int{1, 2, 3, 9, 12}
	}
	for _, logN := range logs {
		N := 1 << logN
		d := fft.NewDomain(uint64(N))
		lo := HStreamMinBlock(uint32(logN))
		blocks := []uint64{lo}
		if 2*lo <= uint64(N) {
			blocks = append(blocks, 2*lo)
		}
		if uint64(N) > 2*lo {
			blocks = append(blocks, uint64(N))
		}
		for _, n := range []int{N, N - N/3} {
			if n == 0 {
				continue
			}
			a, b := randFr(rng, n), randFr(rng, n)
			ab := make([]fr.Element, n)
			for i := range ab {
				ab[i].Mul(&a[i], &b[i])
			}
			want := gnarkref.ComputeH(a, b, ab, d)
			for _, block := range blocks {
				got, tm, err := ComputeHStreamOn(0, a, b, logN, block)
				if err != nil {
					t.Fatalf("2^%d, %d inputs, block %d: %v", logN, n, block, err)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Errorf("2^%d, %d inputs, block %d: first difference at %d: got %s want %s", logN, n, block, i, got[i].String(), want[i].String())
				}
				if logN >= 20 {
					t.Logf("2^%d, block %d: %v (passes 1-2 %v, 3 %v, 4 %v)", logN, block, tm.Total, tm.INTT, tm.CosetNTT, tm.CosetINTT)
				}
			}
		}
	}
	a := randFr(rng, 1<<12)
	for _, block := range []uint64{HStreamMinBlock(12) / 2, 3 << 6, 1 << 13} {
		if _, _, err := ComputeHStreamOn(0, a, a, 12, block); !errors.Is(err, ErrInvalid) {
			t.Errorf("block %d of a domain of 2^12: err = %v, want ErrInvalid", block, err)
		}
	}
}

// TestComputeHDevice checks the resident variant (the one the prover
// pipelines) against the host variant and reports its phases.
func TestComputeHDevice(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(9, 10))
	const logN = 16
	N := 1 << logN
	a, b := randFr(rng, N), randFr(rng, N)
	want, err := ComputeH(a, b, logN)
	if err != nil {
		t.Fatal(err)
	}
	bufs := make([]*Buffer, 3)
	for i := range bufs {
		if bufs[i], err = Alloc(0, N*FrBytes); err != nil {
			t.Fatal(err)
		}
		defer bufs[i].Free()
	}
	s := newStream(t)
	for _, timing := range []bool{false, true} {
		if err := bufs[0].UploadFr(a, 0, s); err != nil {
			t.Fatal(err)
		}
		if err := bufs[1].UploadFr(b, 0, s); err != nil {
			t.Fatal(err)
		}
		tm, err := ComputeHDevice(bufs[0], bufs[1], bufs[2], logN, s, timing)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]fr.Element, N)
		if err := bufs[0].DownloadFr(got, 0, s); err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(got, want); i >= 0 {
			t.Fatalf("timing=%v: device H differs from host H at %d", timing, i)
		}
		if timing && (tm.Total <= 0 || tm.INTT <= 0 || tm.CosetINTT <= 0) {
			t.Errorf("timing not filled: %+v", tm)
		}
	}
}

// TestBadArguments checks that bad input is an ErrInvalid naming the
// problem, never a crash.
func TestBadArguments(t *testing.T) {
	needDevice(t)
	small := make([]fr.Element, 8)
	buf, err := Alloc(0, 8*FrBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	cases := map[string]error{
		"NTT len 3":               NTT(0, make([]fr.Element, 3), Forward, DIF, false, NTTRadixDefault),
		"NTT len 0":               NTT[fr.Element](0, nil, Forward, DIF, false, NTTRadixDefault),
		"NTT bad direction":       NTT(0, small, Direction(7), DIF, false, NTTRadixDefault),
		"NTT bad decimation":      NTT(0, small, Forward, Decimation(9), false, NTTRadixDefault),
		"NTT radix 3":             NTT(0, small, Forward, DIF, false, NTTRadix(3)),
		"NTTDevice too big":       NTTDevice[fr.Element](buf, 4, Forward, DIF, false, NTTRadixDefault, nil),
		"NTTDevice logN 29":       NTTDevice[fr.Element](buf, 29, Forward, DIF, false, NTTRadixDefault, nil),
		"NTTDevice radix 8":       NTTDevice[fr.Element](buf, 3, Forward, DIF, false, NTTRadix(8), nil),
		"BN254 NTT len 3":         NTT(0, make([]bn254fr.Element, 3), Forward, DIF, false, NTTRadixDefault),
		"BN254 NTTDevice too big": NTTDevice[bn254fr.Element](buf, 4, Inverse, DIT, true, NTTRadixDefault, nil),
		"BN254 NTTDevice logN 29": NTTDevice[bn254fr.Element](buf, 29, Forward, DIF, false, NTTRadixDefault, nil),
		"Upload out of range":     buf.UploadFr(small, 1, nil),
		"ComputeH too many":       func() error { _, err := ComputeH(small, small, 2); return err }(),
		"ComputeH length differs": func() error { _, err := ComputeH(small, small[:4], 3); return err }(),
		"ComputeHDevice small":    func() error { _, err := ComputeHDevice(buf, buf, buf, 4, nil, false); return err }(),
		"Alloc 0":                 func() error { _, err := Alloc(0, 0); return err }(),
	}
	for name, err := range cases {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	// A freed buffer is refused, and freeing twice is harmless.
	b2, err := Alloc(0, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := b2.Free(); err != nil {
		t.Fatal(err)
	}
	if err := b2.Free(); err != nil {
		t.Errorf("second Free: %v", err)
	}
	if err := NTTDevice[fr.Element](b2, 1, Forward, DIF, false, NTTRadixDefault, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("NTTDevice on a freed buffer: %v, want ErrInvalid", err)
	}
	// An allocation larger than the device is ErrOutOfMemory.
	if _, err := Alloc(0, 1<<50); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("Alloc(1 PiB): %v, want ErrOutOfMemory", err)
	}
}

// eventTimer times device work between two CUDA events on a stream.
type eventTimer struct {
	s          *Stream
	start, end *Event
}

func newEventTimer(tb testing.TB) *eventTimer {
	s, err := NewStream(0)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := NewEvent(0)
	if err != nil {
		tb.Fatal(err)
	}
	en, err := NewEvent(0)
	if err != nil {
		tb.Fatal(err)
	}
	return &eventTimer{s, st, en}
}

func (e *eventTimer) close() {
	e.start.Close()
	e.end.Close()
	e.s.Close()
}

// run times iters calls of f (each enqueueing work on e.s) and returns the
// device time per call.
func (e *eventTimer) run(tb testing.TB, iters int, f func() error) time.Duration {
	if err := e.start.Record(e.s); err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < iters; i++ {
		if err := f(); err != nil {
			tb.Fatal(err)
		}
	}
	if err := e.end.Record(e.s); err != nil {
		tb.Fatal(err)
	}
	d, err := Elapsed(e.start, e.end)
	if err != nil {
		tb.Fatal(err)
	}
	return d / time.Duration(iters)
}

// residentRandom returns 2^logN random BLS12-381 scalars on device 0; the
// caller frees the buffer.
func residentRandom(tb testing.TB, logN int, s *Stream) *Buffer {
	return residentRandomOf(tb, blsNTT, logN, s)
}

// residentRandomOf is residentRandom of field f.
func residentRandomOf[E Fr](tb testing.TB, f nttField[E], logN int, s *Stream) *Buffer {
	rng := rand.New(rand.NewPCG(uint64(logN), 11))
	buf, err := Alloc(0, (1<<logN)*FrBytes)
	if err != nil {
		tb.Fatal(err)
	}
	if err := buf.Upload(frBytes(f.random(rng, 1<<logN)), 0, s); err != nil {
		tb.Fatal(err)
	}
	return buf
}

// residentOf uploads v to device 0, freed when the test ends.
func residentOf[E Fr](tb testing.TB, v []E, s *Stream) *Buffer {
	tb.Helper()
	buf, err := Alloc(0, max(1, len(v))*FrBytes)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { buf.Free() })
	if err := buf.Upload(frBytes(v), 0, s); err != nil {
		tb.Fatal(err)
	}
	return buf
}

// nttBenchModes are the transforms BenchmarkNTT and BenchmarkBN254NTT time:
// the plain forward transform and the inverse coset transform (computeH's
// last step).
var nttBenchModes = []nttMode{{Forward, DIF, false}, {Inverse, DIF, true}}

// BenchmarkNTT times resident NTTs with CUDA events (gpu-ms/op), the
// transforms of nttBenchModes in both radixes.
func BenchmarkNTT(b *testing.B) {
	needDevice(b)
	for _, logN := range []int{16, 18, 20, 22, 24, 25, 26} {
		for _, m := range nttBenchModes {
			for _, radix := range []NTTRadix{NTTRadix2, NTTRadix4} {
				b.Run(fmt.Sprintf("%s/2^%d/r%d", m, logN, radix), func(b *testing.B) {
					benchNTT(b, blsNTT, logN, m, radix)
				})
			}
		}
	}
}

func benchNTT[E Fr](b *testing.B, fl nttField[E], logN int, m nttMode, radix NTTRadix) {
	et := newEventTimer(b)
	defer et.close()
	buf := residentRandomOf(b, fl, logN, et.s)
	defer buf.Free()
	if err := PrepareNTT[E](0, logN); err != nil {
		b.Fatal(err)
	}
	f := func() error { return NTTDevice[E](buf, logN, m.dir, m.dec, m.coset, radix, et.s) }
	et.run(b, 2, f) // warm-up
	b.ResetTimer()
	per := et.run(b, b.N, f)
	b.ReportMetric(float64(per)/1e6, "gpu-ms/op")
}

// BenchmarkComputeH times the resident H computation with CUDA events and
// logs the phase breakdown.
func BenchmarkComputeH(b *testing.B) {
	needDevice(b)
	for _, logN := range []int{20, 22, 24} {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			et := newEventTimer(b)
			defer et.close()
			var bufs [3]*Buffer
			for i := range bufs {
				bufs[i] = residentRandom(b, logN, et.s)
				defer bufs[i].Free()
			}
			f := func() error {
				_, err := ComputeHDevice(bufs[0], bufs[1], bufs[2], logN, et.s, false)
				return err
			}
			et.run(b, 1, f) // warm-up, builds the tables
			tm, err := ComputeHDevice(bufs[0], bufs[1], bufs[2], logN, et.s, true)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			per := et.run(b, b.N, f)
			b.ReportMetric(float64(per)/1e6, "gpu-ms/op")
			b.Logf("2^%d phases: intt %v, coset ntt %v, pointwise %v, coset intt %v, total %v",
				logN, tm.INTT, tm.CosetNTT, tm.Pointwise, tm.CosetINTT, tm.Total)
		})
	}
}

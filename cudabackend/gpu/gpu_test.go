package gpu

import "testing"

// TestDomainBytes checks the size formula the budget relies on.
func TestDomainBytes(t *testing.T) {
	cases := []struct {
		logN int
		want uint64
	}{
		{-1, 0},
		{MaxLogN + 1, 0},
		// N = 1: 1 twiddle per direction, lo_bits 0: 2 lo + 4 hi.
		{0, (2 + 2 + 4) * FrBytes},
		// N = 2^10: 1023 twiddles each way, 2^5 lo and 2^5 hi entries.
		{10, (2*1023 + 2*32 + 4*32) * FrBytes},
		// N = 2^11: lo_bits 6, hi bits 5.
		{11, (2*2047 + 2*64 + 4*32) * FrBytes},
	}
	for _, c := range cases {
		if got := DomainBytes(c.logN); got != c.want {
			t.Errorf("DomainBytes(%d) = %d, want %d", c.logN, got, c.want)
		}
	}
	if got, want := ComputeHBytes(20), uint64(3<<20)*FrBytes; got != want {
		t.Errorf("ComputeHBytes(20) = %d, want %d", got, want)
	}
}

// TestLogNOf checks the power-of-two length check of NTT.
func TestLogNOf(t *testing.T) {
	cases := []struct {
		n    int
		want int
		ok   bool
	}{
		{0, 0, false}, {-4, 0, false}, {3, 0, false}, {6, 0, false},
		{1, 0, true}, {2, 1, true}, {1024, 10, true},
		{1 << MaxLogN, MaxLogN, true}, {1 << (MaxLogN + 1), 0, false},
	}
	for _, c := range cases {
		got, ok := logNOf(c.n)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("logNOf(%d) = %d, %v; want %d, %v", c.n, got, ok, c.want, c.ok)
		}
	}
}

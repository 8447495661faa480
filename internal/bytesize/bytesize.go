package bytesize

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Size is a memory size as a person writes it: an absolute number of bytes or
// a percentage of some total (the host's config: RAM for budget.bytes, the
// budget for budget.critical_reserve).
type Size struct {
	// Bytes is the absolute size; meaningful when Percent is zero.
	Bytes uint64
	// Percent, when above zero, makes the size relative: Percent of a total,
	// in (0, 100].
	Percent float64
}

// IsPercent reports whether s is relative to a total.
func (s Size) IsPercent() bool { return s.Percent > 0 }

// Resolve returns the size in bytes, taking a percentage of total when s is
// relative.
func (s Size) Resolve(total uint64) uint64 {
	if !s.IsPercent() {
		return s.Bytes
	}
	return uint64(float64(total) * s.Percent / 100)
}

// String writes s back in Parse's notation, in the largest binary unit
// that divides it exactly.
func (s Size) String() string {
	if s.IsPercent() {
		return strconv.FormatFloat(s.Percent, 'f', -1, 64) + "%"
	}
	return Format(s.Bytes)
}

// Format writes n in the largest binary unit (KiB..TiB) that divides it
// exactly, or in plain bytes.
func Format(n uint64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10) + "B"
}

// sizeUnits maps a lower-cased unit to its multiplier. Binary units (KiB) are
// powers of 1024, decimal ones (KB) powers of 1000, as their names say.
var sizeUnits = map[string]uint64{
	"":    1,
	"b":   1,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
	"kb":  1e3,
	"mb":  1e6,
	"gb":  1e9,
	"tb":  1e12,
}

// Parse reads a size: plain bytes ("1048576"), a number with a unit (B,
// KiB, MiB, GiB, TiB, KB, MB, GB, TB; case-insensitive; "1.5GiB" allowed) or
// a percentage ("80%", in (0, 100]).
func Parse(text string) (Size, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return Size{}, fmt.Errorf("empty size")
	}
	if num, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || math.IsNaN(p) {
			return Size{}, fmt.Errorf("bad percentage %q", text)
		}
		if p <= 0 || p > 100 {
			return Size{}, fmt.Errorf("percentage %q is outside (0%%, 100%%]", text)
		}
		return Size{Percent: p}, nil
	}
	// Split the number from the unit at the first byte that cannot be part of
	// a decimal number.
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	if num == "" {
		if strings.HasPrefix(s, "-") {
			return Size{}, fmt.Errorf("negative size %q", text)
		}
		return Size{}, fmt.Errorf("bad size %q: want a number with an optional unit, like \"64GiB\"", text)
	}
	mult, ok := sizeUnits[unit]
	if !ok {
		return Size{}, fmt.Errorf("bad size %q: unknown unit %q (use B, KiB, MiB, GiB, TiB, KB, MB, GB, TB or %%)", text, s[i:])
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return Size{}, fmt.Errorf("bad size %q: %v", text, numErr(err))
		}
		hi, lo := bits.Mul64(n, mult)
		if hi != 0 {
			return Size{}, fmt.Errorf("size %q is too large", text)
		}
		return Size{Bytes: lo}, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return Size{}, fmt.Errorf("bad size %q: %v", text, numErr(err))
	}
	b := f * float64(mult)
	if b >= math.Exp2(64) {
		return Size{}, fmt.Errorf("size %q is too large", text)
	}
	if b != math.Trunc(b) {
		return Size{}, fmt.Errorf("size %q is not a whole number of bytes", text)
	}
	return Size{Bytes: uint64(b)}, nil
}

// numErr strips strconv's wrapping, which repeats the input.
func numErr(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		return ne.Err
	}
	return err
}

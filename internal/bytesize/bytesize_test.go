package bytesize

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Size
		err  string
	}{
		{in: "1048576", want: Size{Bytes: 1 << 20}},
		{in: "0", want: Size{}},
		{in: "512B", want: Size{Bytes: 512}},
		{in: "4KiB", want: Size{Bytes: 4096}},
		{in: "512MiB", want: Size{Bytes: 512 << 20}},
		{in: "64GiB", want: Size{Bytes: 64 << 30}},
		{in: "64 gib", want: Size{Bytes: 64 << 30}},
		{in: "2TiB", want: Size{Bytes: 2 << 40}},
		{in: "1.5GiB", want: Size{Bytes: 3 << 29}},
		{in: "3KB", want: Size{Bytes: 3000}},
		{in: "5MB", want: Size{Bytes: 5e6}},
		{in: "64GB", want: Size{Bytes: 64e9}},
		{in: "1TB", want: Size{Bytes: 1e12}},
		{in: "80%", want: Size{Percent: 80}},
		{in: " 12.5 % ", want: Size{Percent: 12.5}},
		{in: "100%", want: Size{Percent: 100}},
		{in: "", err: "empty size"},
		{in: "0%", err: "outside"},
		{in: "101%", err: "outside"},
		{in: "x%", err: "bad percentage"},
		{in: "-5GiB", err: "negative size"},
		{in: "GiB", err: "want a number"},
		{in: "5 PiB", err: "unknown unit"},
		{in: "1.2.3GiB", err: "bad size"},
		{in: "0.3B", err: "whole number of bytes"},
		{in: "99999999999TiB", err: "too large"},
		{in: "18446744073709551616", err: "bad size"},
		{in: "20000000000000000000.5GB", err: "too large"},
	} {
		got, err := Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, %v; want an error saying %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestSizeResolveAndString(t *testing.T) {
	if got := (Size{Percent: 80}).Resolve(100 << 30); got != 80<<30 {
		t.Errorf("80%% of 100GiB = %d", got)
	}
	if got := (Size{Bytes: 7}).Resolve(100); got != 7 {
		t.Errorf("absolute size resolved to %d", got)
	}
	for _, tc := range []struct {
		s    Size
		want string
	}{
		{Size{Percent: 80}, "80%"},
		{Size{Percent: 12.5}, "12.5%"},
		{Size{Bytes: 64 << 30}, "64GiB"},
		{Size{Bytes: 1536 << 20}, "1536MiB"},
		{Size{Bytes: 1000}, "1000B"},
		{Size{}, "0B"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.s, got, tc.want)
		}
		// What String writes, Parse reads back.
		if back, err := Parse(tc.s.String()); err == nil && back != tc.s {
			t.Errorf("round trip of %+v gave %+v", tc.s, back)
		}
	}
}

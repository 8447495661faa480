package waterfall

import "sort"

// span is a half-open interval [a, b) in nanoseconds from the start of the
// timeline. Gap arithmetic works on sorted, disjoint span lists ("unions").
type span struct{ a, b int64 }

func (s span) len() int64 { return s.b - s.a }

// union sorts spans and merges the ones that overlap or touch. Empty spans
// vanish.
func union(spans []span) []span {
	in := make([]span, 0, len(spans))
	for _, s := range spans {
		if s.b > s.a {
			in = append(in, s)
		}
	}
	sort.Slice(in, func(i, j int) bool { return in[i].a < in[j].a })
	var out []span
	for _, s := range in {
		if n := len(out); n > 0 && s.a <= out[n-1].b {
			out[n-1].b = max(out[n-1].b, s.b)
			continue
		}
		out = append(out, s)
	}
	return out
}

// complement returns the parts of [lo, hi) that no span of u covers.
func complement(u []span, lo, hi int64) []span {
	var out []span
	at := lo
	for _, s := range u {
		if s.b <= at {
			continue
		}
		if s.a >= hi {
			break
		}
		if s.a > at {
			out = append(out, span{at, s.a})
		}
		at = max(at, s.b)
	}
	if at < hi {
		out = append(out, span{at, hi})
	}
	return out
}

// intersect returns the parts of the spans in parts (sorted, disjoint) that the
// union u covers.
func intersect(parts, u []span) []span {
	var out []span
	for _, p := range parts {
		// The first span of u that ends after p starts.
		i := sort.Search(len(u), func(i int) bool { return u[i].b > p.a })
		for ; i < len(u) && u[i].a < p.b; i++ {
			a, b := max(p.a, u[i].a), min(p.b, u[i].b)
			if b > a {
				out = append(out, span{a, b})
			}
		}
	}
	return out
}

// subtract returns the parts of the spans in parts (sorted, disjoint) that the
// union u does not cover.
func subtract(parts, u []span) []span {
	var out []span
	for _, p := range parts {
		out = append(out, complement(u, p.a, p.b)...)
	}
	return out
}

func total(spans []span) int64 {
	var n int64
	for _, s := range spans {
		n += s.len()
	}
	return n
}

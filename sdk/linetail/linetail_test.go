package linetail

import (
	"strings"
	"testing"
)

func TestTail(t *testing.T) {
	const keep = 8
	var seen []string
	tail := Tail{Keep: keep, OnLine: func(l string) { seen = append(seen, l) }}
	for i := range keep + 3 {
		tail.Write([]byte("line " + string(rune('a'+i)) + "\n"))
	}
	tail.Write([]byte("\n   \n")) // blank lines are not kept
	tail.Write([]byte("half "))
	tail.Write([]byte("a line"))
	got := tail.String()
	if strings.Contains(got, "line a") || !strings.HasPrefix(got, "line d | ") || !strings.HasSuffix(got, "line k | half a line") {
		t.Errorf("tail = %q, want the last %d lines and the unfinished one", got, keep)
	}
	if len(seen) != keep+3 {
		t.Errorf("OnLine saw %d lines, want %d (blank ones and the unfinished one left out)", len(seen), keep+3)
	}
	tail.Flush()
	if len(seen) != keep+4 || seen[len(seen)-1] != "half a line" {
		t.Errorf("after Flush OnLine saw %v, want the unfinished line last", seen)
	}
	long := Tail{Keep: keep}
	long.Write([]byte(strings.Repeat("x", 5000) + "\n"))
	if n := len(long.String()); n != 1024 {
		t.Errorf("a 5000-byte line is kept as %d bytes, want 1024", n)
	}
}

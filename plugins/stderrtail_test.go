package plugins

import (
	"strings"
	"testing"
)

func TestStderrTail(t *testing.T) {
	var tail stderrTail
	for i := range stderrTailLines + 3 {
		tail.Write([]byte("line " + string(rune('a'+i)) + "\n"))
	}
	tail.Write([]byte("\n   \n")) // blank lines are not kept
	tail.Write([]byte("half "))
	tail.Write([]byte("a line"))
	got := tail.String()
	if strings.Contains(got, "line a") || !strings.HasPrefix(got, "line d | ") || !strings.HasSuffix(got, "line k | half a line") {
		t.Errorf("tail = %q, want the last %d lines and the unfinished one", got, stderrTailLines)
	}
	var long stderrTail
	long.Write([]byte(strings.Repeat("x", 5000) + "\n"))
	if n := len(long.String()); n != 1024 {
		t.Errorf("a 5000-byte line is kept as %d bytes, want 1024", n)
	}
}

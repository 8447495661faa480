package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestRun: the program writes every file the README's "Your own circuit" uses,
// and each wire assignment is its header and 32 bytes per wire (the README's
// commands then import and prove them, in make docs-test).
func TestRun(t *testing.T) {
	dir := t.TempDir()
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"my.ccs", "my.pk", "my.vk", "w0.wtns", "w1.wtns"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"a0.wires", "a1.wires"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		n := binary.BigEndian.Uint32(b[16:20])
		if string(b[:4]) != "ZKWA" || binary.BigEndian.Uint32(b[4:8]) != 1 || binary.BigEndian.Uint32(b[8:12]) != 2 || len(b) != 20+32*int(n) {
			t.Errorf("%s: header %x, %d bytes for %d wires", f, b[:20], len(b), n)
		}
	}
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProveCommandErrors covers the mistakes prove refuses before any proving.
func TestProveCommandErrors(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale")
	os.Mkdir(stale, 0o755)
	os.WriteFile(filepath.Join(stale, "9.proof"), []byte("x"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"prove", "--keys", dir, "--circuit", "merkle", "--partitions", "1", "--out", stale}, 1,
			"output directory " + stale + " already holds proofs (9.proof); choose another or empty it"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

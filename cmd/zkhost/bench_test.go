package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestBenchCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench", "--jobs", "0"}, 2, "must be at least 1"},
		{[]string{"bench", "--circuit", "nope"}, 2, "nope"},
		{[]string{"bench", "--circuit", "chain", "--k", "99"}, 2, "out of range"},
		{[]string{"bench", "--curve", "bls12-377"}, 2, `--curve: unknown curve "bls12-377"`},
		{[]string{"bench", "--api", "/x.sock", "--config", "/y.toml"}, 2, "not both"},
		{[]string{"bench", "--api", "/x.sock", "--no-timeline"}, 2, "standalone"},
		{[]string{"bench", "--class", "urgent"}, 2, "urgent"},
		{[]string{"bench", "--circuit", "mine", filepath.Join(dir, "missing.wtns")}, 1, "missing.wtns"},
		{[]string{"bench", filepath.Join(dir, "a.wtns")}, 2, "FILE arguments need --circuit"},
		{[]string{"bench", "--circuit", "mine", "--k", "12", filepath.Join(dir, "a.wtns")}, 2, "--k is an example circuit's"},
		{[]string{"bench", "--circuit", "mine", "--partitions", "1", "a", "b"}, 2, "would leave out some of the 2 FILE arguments"},
		{[]string{"bench", "--assignment"}, 2, "--assignment needs the wire assignment files"},
		{[]string{"bench", "--backend", filepath.Join(dir, "missing"), "--keys", dir, "--no-timeline"}, 1, "make build"},
		{[]string{"bench", "--api", filepath.Join(dir, "none.sock")}, 1, "none.sock"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrepareStateDir(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct {
		name      string
		mode      os.FileMode // 0: the directory does not exist yet
		tightened bool
		refused   string
	}{
		{"created", 0, false, ""},
		{"private", 0o700, false, ""},
		{"group readable", 0o750, false, ""},
		{"sticky world writable", 0o777 | os.ModeSticky, false, "shared directory"},
		{"group writable", 0o770, true, ""},
		{"world writable", 0o777, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, strings.ReplaceAll(tc.name, " ", "-"))
			if tc.mode != 0 {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			tightened, err := PrepareStateDir(dir)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), dir) {
					t.Fatalf("PrepareStateDir: %v, want a refusal naming %s and saying %q", err, dir, tc.refused)
				}
				return
			}
			if err != nil || tightened != tc.tightened {
				t.Fatalf("PrepareStateDir: tightened %v, %v; want %v", tightened, err, tc.tightened)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm()&0o022 != 0 {
				t.Errorf("mode after PrepareStateDir: %s", fi.Mode())
			}
		})
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareStateDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("PrepareStateDir of a file: %v", err)
	}
}

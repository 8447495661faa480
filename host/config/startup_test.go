package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zkhost/zkhost/host/api"
)

// TestCheckJournalSpace: the journal's filesystem must hold the reserve and a
// first job; too little is an error on a first start and a warning when a
// journal is there (a restart on a full disk resumes its jobs).
func TestCheckJournalSpace(t *testing.T) {
	const reserve = 64 << 20
	for _, tc := range []struct {
		name          string
		total, free   uint64
		journal, held bool // a journal file, a held reserve file
		err, warn     string
	}{
		{"room", 1 << 30, 512 << 20, false, false, "", ""},
		{"exactly room", 1 << 30, reserve + journalRoom, false, false, "", ""},
		{"reserve above the filesystem", 32 << 20, 30 << 20, false, false, "journal.reserve: 64MiB is more than the whole filesystem of", ""},
		{"short on a first start", 1 << 30, 10 << 20, false, false, "has 10MiB free, less than [journal] reserve (64MiB) and room for a first job (1MiB): the daemon would start and refuse every job", ""},
		{"short with a journal", 1 << 30, 10 << 20, true, false, "", "has 10MiB free, less than [journal] reserve (64MiB) and room for a first job (1MiB): jobs already accepted resume"},
		{"reserve held by an earlier run", 1 << 30, 2 << 20, true, true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state", "journal.db") // state not created yet
			if tc.journal {
				os.Mkdir(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte("j"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.held {
				f, err := os.Create(path + ".reserve")
				if err != nil {
					t.Fatal(err)
				}
				if err := unix.Fallocate(int(f.Fd()), 0, 0, reserve); err != nil {
					t.Fatal(err)
				}
				f.Close()
			}
			var asked string
			stat := func(d string) (fsSpace, error) { asked = d; return fsSpace{total: tc.total, free: tc.free}, nil }
			warn, err := checkJournalSpace(path, reserve, stat)
			if want := filepath.Dir(path); !tc.journal && asked != dir || tc.journal && asked != want {
				t.Errorf("statfs of %s, want the nearest existing directory", asked)
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("error %v, want %q", err, tc.err)
			}
			if tc.warn == "" && warn != "" || !strings.Contains(warn, tc.warn) {
				t.Errorf("warning %q, want %q", warn, tc.warn)
			}
		})
	}
	// On this machine: a reserve larger than the filesystem is refused.
	var st unix.Statfs_t
	dir := t.TempDir()
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	total := st.Blocks * uint64(st.Bsize)
	if _, err := CheckJournalSpace(filepath.Join(dir, "journal.db"), total+1); err == nil || !strings.Contains(err.Error(), "is more than the whole filesystem of "+dir) {
		t.Errorf("a reserve above the filesystem's %d bytes: %v", total, err)
	}
	if _, err := CheckJournalSpace(filepath.Join(dir, "journal.db"), 0); err != nil {
		t.Errorf("no reserve: %v", err)
	}
}

// TestCheckStartup: a socket under a missing directory (other than the state
// directory) and a token file with a line break inside are refused naming the
// setting, and nothing is created.
func TestCheckStartup(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.token")
	if err := os.WriteFile(good, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.token")
	if err := os.WriteFile(broken, []byte("0123456789abcdef\n0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state") // created by the daemon, not here
	aFile := filepath.Join(dir, "file")
	os.WriteFile(aFile, nil, 0o600)
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		want string // empty: accepted
	}{
		{"defaults", func(c *Config) {}, ""},
		{"socket in the state directory", func(c *Config) { c.API.Socket = filepath.Join(state, "other.sock") }, ""},
		{"socket in an existing directory", func(c *Config) { c.API.Socket = filepath.Join(dir, "zk.sock") }, ""},
		{"socket under a missing directory", func(c *Config) { c.API.Socket = filepath.Join(dir, "run", "zk", "zk.sock") },
			"api.socket: the directory of " + filepath.Join(dir, "run", "zk", "zk.sock") + " does not exist"},
		{"socket under the state directory's missing subdirectory", func(c *Config) { c.API.Socket = filepath.Join(state, "run", "zk.sock") }, "does not exist"},
		{"socket under a file", func(c *Config) { c.API.Socket = filepath.Join(aFile, "zk.sock") }, "is not a directory"},
		{"api token", func(c *Config) { c.API.TokenFile = good }, ""},
		{"api token with a line break", func(c *Config) { c.API.TokenFile = broken }, "api.token_file: token file " + broken + ": the token has a line break inside it"},
		{"missing api token", func(c *Config) { c.API.TokenFile = filepath.Join(dir, "none") }, "api.token_file: token file: open"},
		{"client token with a line break", func(c *Config) {
			c.API.Clients = []api.ClientConfig{{Name: "alice", TokenFile: good}, {Name: "bob", TokenFile: broken}}
		},
			`client[1].token_file (client "bob"): token file ` + broken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{StateDir: state, API: API{Config: api.Config{Socket: filepath.Join(state, "zkhost.sock")}},
				Journal: Journal{Path: filepath.Join(state, "journal.db")}}
			tc.cfg(c)
			_, err := CheckStartup(c)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckStartup: %v; want %q", err, tc.want)
			}
			for _, p := range []string{state, filepath.Join(dir, "run")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was created (or %v)", p, err)
				}
			}
		})
	}
}

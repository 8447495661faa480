package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		name    string
		args    []string
		getenv  func(string) string
		check   func(t *testing.T, o options)
		wantErr string
	}{
		{name: "defaults", check: func(t *testing.T, o options) {
			if o.crashPhase != "" || o.hangPhase != "" || o.invalidP != 0 || o.crashP != 1 || o.kind != "cpu" || o.seed != 1 || o.maxInFlightClaim != -1 {
				t.Errorf("defaults: %+v", o)
			}
			if o.String() != "none" {
				t.Errorf("String() = %q, want none", o.String())
			}
		}},
		{name: "the daemon's -key=value form", args: []string{"-crash=prove-mid", "-crash-p=0.25", "-invalid-p=0.5", "-seed=7", "-slow=150ms", "-threads=1"},
			check: func(t *testing.T, o options) {
				if o.crashPhase != phaseProveMid || o.crashP != 0.25 || o.invalidP != 0.5 || o.seed != 7 || o.slow != 150*time.Millisecond || o.threads != 1 {
					t.Errorf("parsed %+v", o)
				}
				if s := o.String(); !strings.Contains(s, "crash=prove-mid p=0.25") || !strings.Contains(s, "invalid p=0.5") {
					t.Errorf("String() = %q", s)
				}
			}},
		{name: "environment defaults", getenv: env("ZKHOST_FAULT_HANG", "loadkey", "ZKHOST_FAULT_SEED", "9", "ZKHOST_FAULT_EXIT_BEFORE_HANDSHAKE", "true"),
			check: func(t *testing.T, o options) {
				if o.hangPhase != phaseLoadKey || o.seed != 9 || !o.exitBeforeHandshake {
					t.Errorf("parsed %+v", o)
				}
			}},
		{name: "flags override the environment", args: []string{"-seed=3"}, getenv: env("ZKHOST_FAULT_SEED", "9"),
			check: func(t *testing.T, o options) {
				if o.seed != 3 {
					t.Errorf("seed %d, want 3", o.seed)
				}
			}},
		{name: "unknown phase", args: []string{"-crash=prove-end"}, wantErr: `-crash is "prove-end", want one of describe, loadkey, prove-start, prove-mid, after-proof`},
		{name: "unknown hang phase", args: []string{"-hang=never"}, wantErr: `-hang is "never"`},
		{name: "probability above one", args: []string{"-invalid-p=1.5"}, wantErr: "-invalid-p is 1.5, want a probability from 0 to 1"},
		{name: "negative probability", args: []string{"-crash-p=-0.1"}, wantErr: "-crash-p is -0.1"},
		{name: "unknown crash-how", args: []string{"-crash-how=explode"}, wantErr: `-crash-how is "explode", want kill, exit or panic`},
		{name: "unknown invalid-how", args: []string{"-invalid-how=flip"}, wantErr: `-invalid-how is "flip", want negate or garbage`},
		{name: "negative slow", args: []string{"-slow=-1s"}, wantErr: "-slow and -mid-delay must not be negative"},
		{name: "negative api version", args: []string{"-api-version=-1"}, wantErr: "-api-version is -1"},
		{name: "empty kind", args: []string{"-kind="}, wantErr: "-kind is empty"},
		{name: "zero max-in-flight", args: []string{"-max-in-flight=0"}, wantErr: "want threads >= 0 and max-in-flight >= 1"},
		{name: "unknown flag", args: []string{"-thread=1"}, wantErr: "flag provided but not defined: -thread"},
		{name: "stray argument", args: []string{"extra"}, wantErr: `unexpected arguments ["extra"]`},
		{name: "bad environment number", getenv: env("ZKHOST_FAULT_CRASH_P", "often"), wantErr: `ZKHOST_FAULT_CRASH_P="often" is not a number`},
		{name: "bad environment duration", getenv: env("ZKHOST_FAULT_SLOW", "5"), wantErr: `ZKHOST_FAULT_SLOW="5" is not a duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := tc.getenv
			if getenv == nil {
				getenv = func(string) string { return "" }
			}
			o, err := parseOptions(tc.args, getenv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, o)
		})
	}
}

func TestNextRun(t *testing.T) {
	if n, err := nextRun(""); err != nil || n != 0 {
		t.Fatalf("no run file: %d, %v; want 0", n, err)
	}
	path := filepath.Join(t.TempDir(), "runs")
	for want := uint64(1); want <= 3; want++ {
		n, err := nextRun(path)
		if err != nil || n != want {
			t.Fatalf("run %d: got %d, %v", want, n, err)
		}
	}
	if err := os.WriteFile(path, []byte("many\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := nextRun(path); err == nil || !strings.Contains(err.Error(), `holds "many", not a counter`) {
		t.Fatalf("corrupt run file: %v", err)
	}
}

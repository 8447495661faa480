package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/cli"
	"github.com/zkhost/zkhost/host/oneshot"
)

// TestProveCommandErrors covers the mistakes prove refuses before any proving.
func TestProveCommandErrors(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "stale")
	os.Mkdir(stale, 0o755)
	os.WriteFile(filepath.Join(stale, "9.proof"), []byte("x"), 0o644)
	keys := filepath.Join(dir, "keys")
	os.Mkdir(keys, 0o755)
	os.WriteFile(filepath.Join(keys, "merkle-d4-k2.pk"), nil, 0o644)
	os.WriteFile(filepath.Join(keys, "mine.pk"), nil, 0o644)
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	keyFile := filepath.Join(keys, "mine.pk")
	out := filepath.Join(dir, "out")
	prove := func(keys, name string) []string {
		return []string{"prove", "--keys", keys, "--circuit", name, "--partitions", "1", "--out", out}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"prove", "--keys", dir, "--circuit", "merkle", "--partitions", "1", "--out", stale}, 1,
			"output directory " + stale + " already holds proofs (9.proof); choose another or empty it"},
		{[]string{"prove", "--keys", keys, "--circuit", "merkle", "--partitions", "-3", "--out", out}, 2, "--partitions must be at least 1"},
		{[]string{"prove", "--keys", keys, "--circuit", "merkle", "--partitions", "0", "--out", out}, 2, "--partitions must be at least 1"},
		{append(prove(keys, "merkle"), "--backend-sha256", "abcd"), 2, `--backend-sha256: want 64 hex digits (a SHA-256), got "abcd"`},
		{prove(keyFile, "merkle"), 1, "--keys " + keyFile + " is not a directory"},
		{prove(filepath.Join(dir, "none"), "merkle"), 1, "key directory: stat " + filepath.Join(dir, "none") + ": no such file"},
		// keygen is suggested only for the example circuits it knows; key import for any other.
		{prove(keys, "nosuch"), 1, `no key set named "nosuch" in ` + keys + " (it holds merkle-d4-k2, mine); bring a gnark circuit's files in with `zkhost key import --ccs FILE --pk FILE --vk FILE --name nosuch --out " + keys + "`\n"},
		{prove(empty, "nosuch"), 1, `no key set named "nosuch" in ` + empty + " (it holds none); bring"},
		{prove(keys, "chain"), 1, "(it holds merkle-d4-k2, mine); make one with `zkhost keygen --circuit chain --out " + keys + "`"},
		{prove(keys, "chain-k16"), 1, "make one with `zkhost keygen --circuit chain --param k=16 --out " + keys + "`"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func TestReportExitStatus(t *testing.T) {
	live := context.Background()
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	interrupted := &oneshot.InterruptedError{Written: 6, Total: 30, OutDir: "pint", Err: context.Canceled}
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		code int
		want string // stderr
	}{
		{live, nil, 0, ""},
		{live, flag.ErrHelp, 0, ""},
		{live, errors.New("boom"), 1, "zkhost prove: boom\n"},
		{live, fmt.Errorf("%w: bad flag", cli.ErrUsage), 2, "zkhost prove: bad flag\nUsage: zkhost prove --keys KEYDIR --circuit NAME (--partitions N | [--assignment] FILE...) --out DIR\nRun 'zkhost help prove' for details.\n"},
		{stopped, interrupted, 130, "zkhost prove: interrupted: wrote 6 of 30 proofs to pint; the directory is incomplete (no summary.json)\n"},
		{stopped, context.Canceled, 130, "zkhost prove: interrupted\n"},
		{stopped, nil, 0, ""},
	} {
		var stderr bytes.Buffer
		prove, _, _, _ := commands.Find([]string{"prove"})
		if code := report(tc.ctx, prove, tc.err, &stderr); code != tc.code || stderr.String() != tc.want {
			t.Errorf("report(%v) = %d, %q; want %d, %q", tc.err, code, stderr.String(), tc.code, tc.want)
		}
	}
}

func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: "github.com/zkhost/zkhost", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"}}}
	want := "zkhost v9.9.9\nrevision abc123 (2026-01-02T03:04:05Z), with uncommitted changes\nbuilt with go1.99 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if got := versionText("v9.9.9", bi); got != want {
		t.Errorf("versionText = %q\nwant %q", got, want)
	}
	if got := versionText("devel", nil); got != "zkhost devel\nbuilt with "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+"\n" {
		t.Errorf("versionText(nil) = %q", got)
	}
}

func TestPrintResult(t *testing.T) {
	res := &oneshot.Result{Circuit: "merkle-d4-k2", Total: 3992600 * time.Microsecond,
		Partitions: []oneshot.PartitionResult{{Index: 0, Verified: true, Prove: time.Second}}}
	res.Backend.Name, res.Backend.Device.Kind, res.Backend.Device.Model = "zkhost-backend-cpu", "cpu", "x"
	var out bytes.Buffer
	printResult(&out, res)
	s := out.String()
	// The wall time has a line of its own, not a footer in the verified column.
	if strings.Contains(s, "3992.6 MS") || !strings.HasSuffix(s, "\n1 partition proven and verified in 3992.6 ms wall time\n") {
		t.Errorf("result:\n%s", s)
	}
}

package timeline

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// helperEnv, when set in the environment, makes the test binary run
// diskFullHelper on the file it names instead of the tests (see TestMain).
const helperEnv = "ZKHOST_TIMELINE_DISKFULL_HELPER"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		if err := diskFullHelper(path); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// diskFullHelper runs in a process of its own, since RLIMIT_FSIZE holds for
// every file of a process: it records four batches of ten events (partitions
// 0-9, 10-19, ...), the second and third under a file size limit just above
// the file's size, which makes the kernel take part of the write and refuse
// the rest (EFBIG), as a full disk does. It prints "batch N: SIZE ERR" per
// batch; the Writer logs to stderr.
func diskFullHelper(path string) error {
	log := hclog.New(&hclog.LoggerOptions{Output: os.Stderr, Level: hclog.Info})
	w, err := Open(path, Rotation{}, log)
	if err != nil {
		return err
	}
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		return err
	}
	t0 := time.Unix(1700000000, 0)
	for batch := range 4 {
		if batch == 1 {
			st, err := os.Stat(path)
			if err != nil {
				return err
			}
			lim := unix.Rlimit{Cur: uint64(st.Size()) + 100, Max: old.Max}
			if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
				return err
			}
		}
		if batch == 3 {
			if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
				return err
			}
		}
		for i := range 10 {
			w.Record(Event{Job: "j", Partition: batch*10 + i, Phase: PhaseSynthesis, Start: t0, End: t0})
		}
		ferr := w.Flush()
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		fmt.Printf("batch %d: %d %v\n", batch, st.Size(), ferr)
	}
	return w.Close()
}

// TestDiskFullTimeline fills the disk under a Writer (a file size limit in a
// helper process) and lifts it again: the failed writes leave no torn line,
// the failure is logged once, recording resumes by itself, and the file reads
// back with the events of the batches written.
func TestDiskFullTimeline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var sizes []int64
	var errs []string
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var batch int
		var size int64
		var rest string
		if _, err := fmt.Sscanf(sc.Text(), "batch %d: %d %s", &batch, &size, &rest); err != nil {
			t.Fatalf("helper said %q: %v", sc.Text(), err)
		}
		sizes = append(sizes, size)
		errs = append(errs, strings.TrimPrefix(sc.Text(), fmt.Sprintf("batch %d: %d ", batch, size)))
	}
	if len(sizes) != 4 {
		t.Fatalf("helper reported %d batches, want 4:\n%s", len(sizes), stdout.String())
	}
	if errs[0] != "<nil>" || errs[3] != "<nil>" {
		t.Errorf("flushes before the limit and after it was lifted: %q and %q, want <nil>", errs[0], errs[3])
	}
	for _, b := range []int{1, 2} {
		if !strings.Contains(errs[b], "file too large") {
			t.Errorf("batch %d under the limit: flush said %q, want the kernel's EFBIG", b, errs[b])
		}
		if sizes[b] != sizes[0] {
			t.Errorf("batch %d under the limit left the file at %d bytes, want it cut back to %d", b, sizes[b], sizes[0])
		}
	}
	logs := stderr.String()
	if n := strings.Count(logs, "timeline: writing failed"); n != 1 {
		t.Errorf("the failure was logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, "timeline: recording again") || !strings.Contains(logs, "dropped_events=20") {
		t.Errorf("no log of recording again with 20 dropped events:\n%s", logs)
	}

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ReadAll(f)
	if err != nil {
		t.Fatalf("the timeline does not read back: %v", err)
	}
	if c.TornLine != 0 {
		t.Errorf("line %d is torn", c.TornLine)
	}
	var got []int
	for _, ev := range c.Events {
		got = append(got, ev.Partition)
	}
	var want []int
	for _, p := range []int{0, 30} {
		for i := range 10 {
			want = append(want, p+i)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("partitions read back %v, want %v (the first and last batches)", got, want)
	}
}

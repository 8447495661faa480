package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/timeline"
)

func TestTimelineCommand(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tl.jsonl")
	w, err := timeline.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	w.Record(timeline.Event{Job: "j", Lane: "synth0", Phase: timeline.PhaseSynthesis, Start: ms(0), End: ms(400)})
	w.Record(timeline.Event{Job: "j", Lane: "synth0", Phase: timeline.PhaseStage, Start: ms(400), End: ms(450)})
	w.Record(timeline.Event{Job: "j", Attempt: 1, Lane: "dev0", Phase: timeline.PhaseDispatch, Start: ms(450), End: ms(450)})
	w.Record(timeline.Event{Job: "j", Attempt: 1, Lane: "dev0", Phase: "msm_g1", Start: ms(450), End: ms(1450), DeviceBusy: time.Second})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "page.html")
	var stdout, stderr bytes.Buffer
	// Flags after the file, as in the documented usage.
	if code := run([]string{"timeline", src, "-o", out, "--title", "run 1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "<title>run 1</title>") || !strings.Contains(string(page), `data-cause="synthesis"`) {
		t.Errorf("page lacks its title or the synthesis gap")
	}
	// dev0 idles 450 ms of 1450 waiting on synthesis: busy 69.0%.
	if s := stdout.String(); !strings.Contains(s, "dev0") || !strings.Contains(s, "69.0") || !strings.Contains(s, "waiting on synthesis") {
		t.Errorf("summary:\n%s", s)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"timeline"}, 2, "want one timeline file"},
		{[]string{"timeline", filepath.Join(dir, "missing.jsonl")}, 1, "no such file"},
		{[]string{"timeline", src, "--width", "5"}, 2, "--width 5"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"job\":\"j\",\"phase\":\"ntt\"}\nnot json\n"), 0o600)
	stderr.Reset()
	if code := run([]string{"timeline", bad}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "line 2") {
		t.Errorf("bad file: exit %d, %q", code, stderr.String())
	}
}

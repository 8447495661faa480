package plugins

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestBackendLoggerWholeNumbers(t *testing.T) {
	var buf bytes.Buffer
	l := backendLogger(hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace}))
	// What go-plugin hands over for {"host_bytes":8413066,"took":11323802,"ratio":0.25,"key":"k"}.
	l.Named("dev0").With("pid", float64(4242)).Info("key loaded", "host_bytes", float64(8413066), "took", float64(11323802), "ratio", 0.25, "key", "k")
	got := buf.String()
	for _, want := range []string{"host_bytes=8413066", "took=11323802", "ratio=0.25", "key=k", "pid=4242", "dev0"} {
		if !strings.Contains(got, want) {
			t.Errorf("log line %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "e+0") {
		t.Errorf("log line %q still has a number in float notation", got)
	}
}

package devsetup

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestBN254IsGenerated: devsetupbn254's code is what gen.sh makes of this package's, so
// a change here reaches BN254's setup only through go generate.
func TestBN254IsGenerated(t *testing.T) {
	gofmt := filepath.Join(runtime.GOROOT(), "bin", "gofmt")
	out := t.TempDir()
	cmd := exec.Command("sh", "gen.sh")
	cmd.Env = append(os.Environ(), "OUT="+out, "PATH="+filepath.Dir(gofmt)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen.sh: %v\n%s", err, b)
	}
	for _, f := range []string{"setup.go", "fixedbase.go", "lagrange.go"} {
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "devsetupbn254", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("devsetupbn254/%s differs from gen.sh's output: run go generate ./internal/devsetup", f)
		}
	}
}

package shm

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk"
)

func vector(t testing.TB, n int) []fr.Element {
	t.Helper()
	v := make([]fr.Element, n)
	for i := range v {
		if _, err := v[i].SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func openTestDir(t *testing.T) *Dir {
	t.Helper()
	d, err := OpenDir(filepath.Join(t.TempDir(), "state", "shm"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestWriteReadsBackThroughOpenPartition(t *testing.T) {
	d := openTestDir(t)
	for _, size := range []struct{ w, c int }{{1, 1}, {129, 128}, {1000, 1 << 12}} {
		W, A, B := vector(t, size.w), vector(t, size.c), vector(t, size.c)
		name := "p-" + strings.Repeat("x", size.w%7+1)
		h, err := d.Write(name, sdk.CurveBLS12381, W, A, B)
		if err != nil {
			t.Fatal(err)
		}
		if got := mode(t, h.Path); got != 0o600 {
			t.Errorf("file mode %v, want 0600", got)
		}
		if filepath.Dir(h.Path) != d.Path() || !strings.HasSuffix(h.Path, FileSuffix) {
			t.Errorf("file %s is not a partition file of %s", h.Path, d.Path())
		}
		p, err := sdk.OpenPartition(h)
		if err != nil {
			t.Fatalf("OpenPartition of a written partition (%d wires, %d constraints): %v", size.w, size.c, err)
		}
		for _, s := range []struct {
			name      string
			got, want []fr.Element
		}{{"W", p.W(), W}, {"A", p.A(), A}, {"B", p.B(), B}} {
			if len(s.got) != len(s.want) {
				t.Fatalf("%s has %d elements, want %d", s.name, len(s.got), len(s.want))
			}
			for i := range s.got {
				if !s.got[i].Equal(&s.want[i]) {
					t.Fatalf("%s[%d] differs", s.name, i)
				}
			}
		}
		p.Close()
		if err := d.Remove(h); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(h.Path); !os.IsNotExist(err) {
			t.Errorf("after Remove: %v", err)
		}
		if err := d.Remove(h); err != nil {
			t.Errorf("second Remove: %v", err)
		}
	}
}

func TestConcurrentWrites(t *testing.T) {
	d := openTestDir(t)
	W, A := vector(t, 64), vector(t, 64)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := d.Write("c"+string(rune('0'+i)), sdk.CurveBLS12381, W, A, A)
			if err == nil {
				_, err = sdk.OpenPartition(h)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestDirModes(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "shm")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := mode(t, d.Path()); got != 0o700 {
		t.Errorf("existing 0755 directory left at %v, want 0700", got)
	}
	// A fresh directory, with missing parents, under a restrictive umask too.
	old := syscall.Umask(0o277)
	d2, err := OpenDir(filepath.Join(base, "a", "b", "shm"))
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if got := mode(t, d2.Path()); got != 0o700 {
		t.Errorf("new directory has mode %v, want 0700", got)
	}
}

func TestDirRefusals(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, path, want string }{
		{"empty", "", "empty"},
		{"file", file, "not a directory"},
		{"symlink", link, "not a directory"},
	}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		if err := os.Mkdir(other, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		tests = append(tests, struct{ name, path, want string }{"other owner", other, "owned by uid 65534"})
	} else {
		t.Log("not root: the other-owner case needs chown and is skipped")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenDir(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("OpenDir(%q) = %v, want an error mentioning %q", tc.path, err, tc.want)
			}
		})
	}
}

func TestNewDirPlacement(t *testing.T) {
	state := t.TempDir()
	// Without /dev/shm: under the state directory.
	saved := devShm
	devShm = filepath.Join(state, "no-dev-shm")
	d, err := NewDir(state)
	devShm = saved
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(state, "shm"); d.Path() != want {
		t.Errorf("without /dev/shm: %s, want %s", d.Path(), want)
	}
	d.Close()

	// With a /dev/shm: one directory per user and state directory.
	fake := filepath.Join(state, "dev-shm")
	if err := os.Mkdir(fake, 0o1777); err != nil {
		t.Fatal(err)
	}
	devShm = fake
	defer func() { devShm = saved }()
	d1, err := NewDir(filepath.Join(state, "one"))
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Close()
	d1again, err := NewDir(filepath.Join(state, "one"))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := NewDir(filepath.Join(state, "two"))
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if filepath.Dir(d1.Path()) != fake || !strings.HasPrefix(filepath.Base(d1.Path()), "zkhost-") {
		t.Errorf("with /dev/shm: %s, want zkhost-<uid>-<hash> in %s", d1.Path(), fake)
	}
	if d1again.Path() != d1.Path() {
		t.Errorf("the same state directory maps to %s and %s", d1.Path(), d1again.Path())
	}
	if d1.Path() == d2.Path() {
		t.Errorf("two state directories share %s", d1.Path())
	}
	if _, err := NewDir(""); err == nil {
		t.Error("NewDir(\"\") did not fail")
	}
}

func TestWriteRejects(t *testing.T) {
	d := openTestDir(t)
	one, two := vector(t, 1), vector(t, 2)
	if _, err := d.Write("taken", sdk.CurveBLS12381, one, one, one); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		pname   string
		curve   sdk.Curve
		W, A, B []fr.Element
		want    string
	}{
		{"empty name", "", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"slash", "a/b", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"dot dot", "..", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"hidden", ".x", sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"too long", strings.Repeat("a", 129), sdk.CurveBLS12381, one, one, one, "bad partition name"},
		{"curve", "c", sdk.CurveBN254, one, one, one, "curve"},
		{"no wires", "w", sdk.CurveBLS12381, nil, one, one, "W is empty"},
		{"no constraints", "a", sdk.CurveBLS12381, one, nil, nil, "A is empty"},
		{"length mismatch", "m", sdk.CurveBLS12381, one, one, two, "len(B) = 2"},
		{"exists", "taken", sdk.CurveBLS12381, one, one, one, "already exists"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.Write(tc.pname, tc.curve, tc.W, tc.A, tc.B)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Write = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	entries, err := os.ReadDir(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("rejected writes left files: %v", entries)
	}
	if err := d.Remove(sdk.PartitionHandle{Path: "/etc/passwd"}); err == nil {
		t.Error("Remove outside the directory did not fail")
	}
	if err := d.Remove(sdk.PartitionHandle{Path: filepath.Join(d.Path(), "x.txt")}); err == nil {
		t.Error("Remove of a file without the suffix did not fail")
	}
}

func TestWriteRemovesFileOnError(t *testing.T) {
	d := openTestDir(t)
	saved := fillFile
	defer func() { fillFile = saved }()
	fillFile = func(f *os.File, h sdk.PartitionHandle, W, A, B []fr.Element) ([32]byte, error) {
		if _, err := f.Write([]byte("half")); err != nil {
			t.Fatal(err)
		}
		return [32]byte{}, syscall.ENOSPC
	}
	v := vector(t, 4)
	_, err := d.Write("full", sdk.CurveBLS12381, v, v, v)
	if err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Fatalf("Write on a full device = %v, want an error saying it does not fit", err)
	}
	if _, err := os.Stat(filepath.Join(d.Path(), "full"+FileSuffix)); !os.IsNotExist(err) {
		t.Errorf("the failed write left its file: %v", err)
	}
}

func TestReapStaleAndClose(t *testing.T) {
	base := filepath.Join(t.TempDir(), "shm")
	d, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	v := vector(t, 4)
	for _, name := range []string{"a", "b", "c"} {
		if _, err := d.Write(name, sdk.CurveBLS12381, v, v, v); err != nil {
			t.Fatal(err)
		}
	}
	// Files that are not partitions stay.
	keep := filepath.Join(base, "notes.txt")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A restarted host opens the same directory and reaps.
	d2, err := OpenDir(base)
	if err != nil {
		t.Fatal(err)
	}
	n, err := d2.ReapStale()
	if err != nil || n != 3 {
		t.Fatalf("ReapStale = %d, %v; want 3, nil", n, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("ReapStale removed a file that is not a partition: %v", err)
	}
	if n, err := d2.ReapStale(); err != nil || n != 0 {
		t.Errorf("second ReapStale = %d, %v; want 0, nil", n, err)
	}
	if _, err := d2.Write("d", sdk.CurveBLS12381, v, v, v); err != nil {
		t.Fatal(err)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base); !os.IsNotExist(err) {
		t.Errorf("after Close the directory is still there: %v", err)
	}
	if _, err := d2.Write("e", sdk.CurveBLS12381, v, v, v); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Write after Close = %v, want a closed error", err)
	}
	if err := d2.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func BenchmarkWrite(b *testing.B) {
	const n = 1 << 20 // 2^20 constraints, 96 MiB
	W, A, B := vector(b, n), vector(b, n), vector(b, n)
	d, err := NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.ResetTimer()
	for i := range b.N {
		h, err := d.Write("bench"+string(rune('a'+i%26)), sdk.CurveBLS12381, W, A, B)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(h.Size)
		d.Remove(h)
	}
}

package config

import (
	"errors"
	"os"
	"testing"
)

// FuzzParse feeds the config parser mutated TOML: it must accept it or return an
// *Error that lists its problems, never panic. The seeds are
// the example config, the embedded default, and a few broken fragments;
// `go test -run '^$' -fuzz '^FuzzParse$' ./host/config` explores from there.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile(examplePath)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add(DefaultTOML())
	for _, s := range []string{
		"[api]\nsocket = 3\n",
		"[[circuit]]\nname = \"merkle\"\nkeys = \"\"\"\nmulti\nline\"\"\"\n",
		"[budget]\nhost = \"12 zettabytes\"\n",
		"[[device]]\nbackend = 'x'\n[device.options]\nA = \"b\"\n",
		"[[device]]\n[[device]]\nindex = -1\n",
		"key = \"unterminated\n",
	} {
		f.Add([]byte(s))
	}
	env := testEnv()
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parse(data, "/etc/zkhost/fuzz.toml", env)
		if err == nil {
			if c == nil {
				t.Fatal("no config and no error")
			}
			return
		}
		var cerr *Error
		if !errors.As(err, &cerr) || len(cerr.Problems) == 0 {
			t.Fatalf("rejected with %T %q, want an *Error listing its problems", err, err)
		}
	})
}

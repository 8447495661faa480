package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadTokenFile: a token file holds one line of printable ASCII; a line
// break inside the token or a control byte is refused naming the file, since
// gRPC could not carry it and every call would fail with an Internal error.
func TestReadTokenFile(t *testing.T) {
	const tok = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name, content, want string // want: empty for a good file, else part of the error
	}{
		{"one line", tok, ""},
		{"trailing newline", tok + "\n", ""},
		{"surrounding white space", "  " + tok + "\r\n\n", ""},
		{"space inside", tok[:16] + " " + tok[16:], ""},
		{"newline inside", tok[:16] + "\n" + tok[16:] + "\n", "line break inside it (after byte 16)"},
		{"carriage return inside", tok[:20] + "\r" + tok[20:], "line break inside it (after byte 20)"},
		{"control byte", tok[:3] + "\x00" + tok[3:], "byte 3 of the token is 0x00"},
		{"not ASCII", tok + "é", "byte 32 of the token is 0xc3"},
		{"short", "abc", "the token is 3 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "token")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadTokenFile(path, nil)
			if tc.want == "" {
				if err != nil || strings.TrimSpace(tc.content) != string(got) {
					t.Fatalf("ReadTokenFile = %q, %v; want the token", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("ReadTokenFile: %v; want an error naming %s and saying %q", err, path, tc.want)
			}
		})
	}
}

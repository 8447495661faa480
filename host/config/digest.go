package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Digest is the SHA-256 a pinned binary (a backend, a synthesizer plugin)
// must have, as bytes, the form the launcher checks; nil when the binary is
// not pinned. Text becomes a Digest once, where it enters (a config file, a
// command-line flag, through ParseDigest), and is passed on as it is from there.
type Digest []byte

// ParseDigest reads a SHA-256 written as 64 hex digits, in either case.
func ParseDigest(s string) (Digest, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != sha256.Size {
		return nil, fmt.Errorf("want 64 hex digits (a SHA-256), got %q", s)
	}
	return raw, nil
}

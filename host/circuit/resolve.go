package circuit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ResolveName finds the key set for circuit name in keyDir: KEYDIR/NAME.pk, or
// the single key set generated from that example circuit (e.g. "merkle" finds
// "merkle-d16-k4"). Several candidates are an error listing them.
func ResolveName(keyDir, name string) (string, error) {
	_, _, pk, _ := Paths(keyDir, name)
	if _, err := os.Stat(pk); err == nil {
		return name, nil
	}
	matches, _ := filepath.Glob(filepath.Join(keyDir, name+"-*"+ExtPK))
	var names []string
	for _, m := range matches {
		names = append(names, strings.TrimSuffix(filepath.Base(m), ExtPK))
	}
	switch len(names) {
	case 0:
		if _, err := os.Stat(keyDir); err != nil {
			return "", fmt.Errorf("key directory: %w", err)
		}
		return "", fmt.Errorf("no keys for circuit %q in %s (run `zkhost keygen --circuit %s --out %s`)", name, keyDir, name, keyDir)
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("circuit %q is ambiguous in %s: name one of %v", name, keyDir, names)
}

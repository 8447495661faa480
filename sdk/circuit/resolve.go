package circuit

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zkhost/zkhost/sdk/circuits"
)

// ResolveName finds the key set for circuit name in keyDir: KEYDIR/NAME.pk, or
// the single key set generated from that example circuit (e.g. "merkle" finds
// "merkle-d16-k4"). Several candidates are an error listing them. No candidate is an
// error listing the key sets keyDir holds and saying how to make the one asked for:
// `zkhost keygen` for an example circuit's name, `zkhost key import` for any other.
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
		return "", noKeySet(keyDir, name)
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("circuit %q is ambiguous in %s: name one of %v", name, keyDir, names)
}

// noKeySet is ResolveName's error for a name with no key set in dir.
func noKeySet(dir, name string) error {
	pks, _ := filepath.Glob(filepath.Join(dir, "*"+ExtPK))
	var sets []string
	for _, pk := range pks {
		sets = append(sets, strings.TrimSuffix(filepath.Base(pk), ExtPK))
	}
	msg := fmt.Sprintf("no key set named %q in %s", name, dir)
	if len(sets) == 0 {
		msg += " (it holds none)"
	} else {
		msg += " (it holds " + strings.Join(sets, ", ") + ")"
	}
	// keygen knows only the example circuits: suggest it for their names alone.
	if slices.Contains(circuits.Names(), name) {
		msg += fmt.Sprintf("; make one with `zkhost keygen --circuit %s --out %s`", name, dir)
	} else if spec, err := circuits.FromID(name); err == nil {
		var params []string
		for _, p := range slices.Sorted(maps.Keys(spec.Params)) {
			params = append(params, fmt.Sprintf("--param %s=%d", p, spec.Params[p]))
		}
		msg += fmt.Sprintf("; make one with `zkhost keygen --circuit %s %s --out %s`", spec.Name, strings.Join(params, " "), dir)
	} else {
		msg += fmt.Sprintf("; bring a gnark circuit's files in with `zkhost key import --ccs FILE --pk FILE --vk FILE --name %s --out %s`", name, dir)
	}
	return errors.New(msg)
}

// Package envflag reads the environment variables that give a backend's
// flags their defaults (ZKHOST_CPU_THREADS, ZKHOST_DEVICE_INDEX, ...): the
// host passes a [[device]]'s env table that way. Both backend commands read
// them alike. It imports only the standard library, so a backend takes it
// without the host's packages.
package envflag

import (
	"fmt"
	"strconv"
)

// Int reads the integer environment variable name through getenv (os.Getenv,
// or a test's map): def when it is unset or empty, an error naming the
// variable when it is not an integer.
func Int(getenv func(string) string, name string, def int) (int, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not an integer", name, v)
	}
	return n, nil
}

// Bool reads the boolean environment variable name through getenv as
// strconv.ParseBool does ("1", "true", "0", "false", ...): def when it is unset
// or empty, an error naming the variable when it is no boolean.
func Bool(getenv func(string) string, name string, def bool) (bool, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q is not a boolean (true or false)", name, v)
	}
	return b, nil
}

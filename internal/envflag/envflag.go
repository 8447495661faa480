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
	return read(getenv, name, def, strconv.Atoi, "an integer")
}

// Bool reads the boolean environment variable name through getenv as
// strconv.ParseBool does ("1", "true", "0", "false", ...): def when it is unset
// or empty, an error naming the variable when it is no boolean.
func Bool(getenv func(string) string, name string, def bool) (bool, error) {
	return read(getenv, name, def, strconv.ParseBool, "a boolean (true or false)")
}

// read reads the environment variable name through getenv with parse: def when
// it is unset or empty, an error saying it is not what (a noun phrase) when
// parse refuses it.
func read[T any](getenv func(string) string, name string, def T, parse func(string) (T, error), what string) (T, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	x, err := parse(v)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s=%q is not %s", name, v, what)
	}
	return x, nil
}

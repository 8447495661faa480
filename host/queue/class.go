package queue

import (
	"fmt"
	"strings"
)

// Class is the priority class of a proof job. Classes are totally ordered:
// Critical before High before Normal before Low. The zero value is not a
// valid class, so a job whose class was never set is rejected with an error
// instead of silently running as Critical (or as anything else).
type Class int

// The priority classes, most urgent first.
const (
	// Critical is for deadline proofs (a WindowPoSt-like proof that must land
	// in a window). It jumps every queue and may use the budget held back for it.
	Critical Class = iota + 1
	// High is for urgent work that is not deadline-bound.
	High
	// Normal is the default class for batch proving.
	Normal
	// Low is for background work that runs only when nothing else waits.
	Low
)

// NumClasses is the number of valid classes.
const NumClasses = 4

// Classes lists every valid class, most urgent first.
func Classes() []Class { return []Class{Critical, High, Normal, Low} }

var classNames = [...]string{Critical: "critical", High: "high", Normal: "normal", Low: "low"}

// Valid reports whether c is one of Critical, High, Normal or Low.
func (c Class) Valid() bool { return c >= Critical && c <= Low }

// Index returns the class's position in priority order: 0 for Critical up to
// NumClasses-1 for Low. It is meant for per-class arrays; c must be valid.
func (c Class) Index() int { return int(c - Critical) }

// String returns the class's lower-case name, or "class(N)" for an invalid one.
func (c Class) String() string {
	if !c.Valid() {
		return fmt.Sprintf("class(%d)", int(c))
	}
	return classNames[c]
}

// ParseClass returns the class named s ("critical", "high", "normal" or
// "low", case-insensitive).
func ParseClass(s string) (Class, error) {
	name := strings.ToLower(strings.TrimSpace(s))
	for _, c := range Classes() {
		if classNames[c] == name {
			return c, nil
		}
	}
	return 0, fmt.Errorf("unknown priority class %q: want one of critical, high, normal, low", s)
}

// MarshalText encodes the class as its name, so configs and JSON show
// "high" rather than 2.
func (c Class) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("invalid priority class %d", int(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText decodes a class name (see ParseClass); TOML configs use it.
func (c *Class) UnmarshalText(text []byte) error {
	parsed, err := ParseClass(string(text))
	if err != nil {
		return err
	}
	*c = parsed
	return nil
}

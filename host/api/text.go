package api

import "fmt"

// The enums marshal as their names, so JSON output (`zkhost status --json`) reads
// "critical" rather than 1.

// MarshalText returns the class's name.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText parses a class name.
func (c *Class) UnmarshalText(b []byte) error { return unmarshalEnum(classNames, b, c) }

// MarshalText returns the state's name.
func (s JobState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a job state name.
func (s *JobState) UnmarshalText(b []byte) error { return unmarshalEnum(jobStateNames, b, s) }

// MarshalText returns the state's name.
func (s PartitionState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses a partition state name.
func (s *PartitionState) UnmarshalText(b []byte) error {
	return unmarshalEnum(partitionStateNames, b, s)
}

// MarshalText returns the kind's name.
func (k EventKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses an event kind name.
func (k *EventKind) UnmarshalText(b []byte) error { return unmarshalEnum(eventKindNames, b, k) }

func unmarshalEnum[E ~int](names map[E]string, b []byte, out *E) error {
	for v, name := range names {
		if name == string(b) {
			*out = v
			return nil
		}
	}
	return fmt.Errorf("unknown value %q", b)
}

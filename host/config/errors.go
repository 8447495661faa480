package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Problem is one thing wrong in a config: a syntax error, an unknown key or a
// bad value.
type Problem struct {
	// Source names the config: its file path, or a label for built-in text.
	Source string
	// Line is the 1-based line of the key, or 0 when the key is not in the
	// file (a default that cannot apply, such as a percentage of unknown RAM).
	Line int
	// Key is the key's path, as "api.socket" or "device[1].selector.model";
	// empty for a syntax error the parser could not tie to a key.
	Key string
	// Message says what is wrong and, where it helps, what would be right.
	Message string
}

// String formats p as "source:line: key: message", leaving out what is unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.Source != "" {
		b.WriteString(p.Source)
		b.WriteByte(':')
	}
	if p.Line > 0 {
		b.WriteString(strconv.Itoa(p.Line))
		b.WriteByte(':')
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error is what Load and Parse return for a config they reject: every problem
// found, in file order.
type Error struct {
	Problems []Problem
	// syntax is the toml parser's error when the file is not valid TOML (then
	// it is the only problem); Unwrap exposes it so a caller can print
	// toml.ParseError.ErrorWithPosition.
	syntax error
}

// Error lists the problems, one a line.
func (e *Error) Error() string {
	if len(e.Problems) == 1 {
		return "config: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "config: %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Unwrap returns the toml parser's error for a syntax error, or nil.
func (e *Error) Unwrap() error { return e.syntax }

// syntaxError turns an error from toml.Decode into an *Error.
func syntaxError(source string, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return &Error{syntax: err, Problems: []Problem{{
			Source:  source,
			Line:    pe.Position.Line,
			Key:     pe.LastKey,
			Message: "invalid TOML: " + pe.Message,
		}}}
	}
	return &Error{syntax: err, Problems: []Problem{{Source: source, Message: "invalid TOML: " + err.Error()}}}
}

// sortProblems orders problems by line; problems without a line (defaults)
// come last, and ties keep the order they were found in.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		li, lj := ps[i].Line, ps[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
}

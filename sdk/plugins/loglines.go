package plugins

import (
	"math"

	"github.com/hashicorp/go-hclog"
)

// backendLogger wraps the logger go-plugin forwards a backend's log lines to.
// go-plugin decodes each JSON line with encoding/json, which makes every number a
// float64, so a byte count of 8413066 would print as 8.413066e+06 and a duration
// in nanoseconds as 1.1323802e+07. Whole numbers are turned back into integers
// before they are logged; other values pass unchanged.
func backendLogger(l hclog.Logger) hclog.Logger { return intLogger{l} }

type intLogger struct{ hclog.Logger }

func (l intLogger) Log(level hclog.Level, msg string, args ...any) {
	l.Logger.Log(level, msg, wholeNumbers(args)...)
}
func (l intLogger) Trace(msg string, args ...any) { l.Logger.Trace(msg, wholeNumbers(args)...) }
func (l intLogger) Debug(msg string, args ...any) { l.Logger.Debug(msg, wholeNumbers(args)...) }
func (l intLogger) Info(msg string, args ...any)  { l.Logger.Info(msg, wholeNumbers(args)...) }
func (l intLogger) Warn(msg string, args ...any)  { l.Logger.Warn(msg, wholeNumbers(args)...) }
func (l intLogger) Error(msg string, args ...any) { l.Logger.Error(msg, wholeNumbers(args)...) }

func (l intLogger) With(args ...any) hclog.Logger {
	return intLogger{l.Logger.With(wholeNumbers(args)...)}
}
func (l intLogger) Named(name string) hclog.Logger      { return intLogger{l.Logger.Named(name)} }
func (l intLogger) ResetNamed(name string) hclog.Logger { return intLogger{l.Logger.ResetNamed(name)} }

// wholeNumbers returns args with each float64 value that holds a whole number
// (within int64) replaced by that int64. Keys (even positions) are left alone.
func wholeNumbers(args []any) []any {
	var out []any
	for i := 1; i < len(args); i += 2 {
		f, ok := args[i].(float64)
		if !ok || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = int64(f)
	}
	if out == nil {
		return args
	}
	return out
}

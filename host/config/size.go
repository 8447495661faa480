package config

import "github.com/zkhost/zkhost/internal/bytesize"

// Size is a memory size as written in the config (bytesize.Size): an absolute
// number of bytes or a percentage of some total (RAM for budget.bytes, the
// budget for budget.critical_reserve).
type Size = bytesize.Size

// ParseSize reads a size as bytesize.Parse does.
func ParseSize(text string) (Size, error) { return bytesize.Parse(text) }

// FormatBytes writes n as bytesize.Format does.
func FormatBytes(n uint64) string { return bytesize.Format(n) }

package sdk

// MaxSocketPath is the longest path a unix socket may have on Linux: sun_path
// is 108 bytes, the terminating NUL included. The plugins' socket directory
// and the host's API socket are both held to it.
const MaxSocketPath = 107

// Package sdnotify tells systemd how the daemon is doing, for a unit of
// Type=notify: READY=1 once the API listens, STOPPING=1 when it begins to stop.
//
// The protocol is sd_notify(3): one datagram of newline-separated KEY=VALUE
// assignments to the unix datagram socket named by $NOTIFY_SOCKET (a path, or an
// abstract socket when it starts with '@'). It is a few lines, written here rather
// than taken from a library: coreos/go-systemd's daemon.SdNotify does the same and
// is where the '@' rule is read from, but it is not in the module set this project
// may use.
package sdnotify

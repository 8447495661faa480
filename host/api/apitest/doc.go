// Package apitest provides Fake, an in-memory api.Service that tests of the API layer,
// the Go client and the CLI serve instead of the daemon. It keeps jobs in a map and moves
// them only when the test says so (Advance, Finish, Fail), so every event a client sees
// is one the test caused. It schedules and proves nothing. Beside it are the
// helpers such tests share: a served Fake, short socket directories, TLS files,
// free loopback addresses and waiting for a condition.
package apitest

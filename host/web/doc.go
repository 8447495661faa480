// Package web serves the daemon's status page and its Prometheus metrics over
// HTTP, at the config's [api] web_address.
//
// Handler answers three paths:
//
//	/                  the status page: plain HTML and a little JavaScript, no
//	                   external assets, polling /api/status.json every 2 s
//	/api/status.json   pipeline counts, queues, the memory budget, devices with
//	                   their busy history, recent jobs (StatusJSON)
//	/metrics           Prometheus exposition of the registry
//
// Authentication follows the API's. A daemon whose API listens on TCP has a
// bearer token ([api] token_file) and a TLS certificate; its web server then
// serves HTTPS with the same certificate and answers every path, the page
// included, only to requests carrying "Authorization: Bearer <token>" or the
// session cookie a browser gets by posting the token to /login (a browser
// without either gets a login form and nothing else; the cookie is a digest of
// the token, HttpOnly, Secure, SameSite=Strict; a Prometheus scrape config sets
// authorization.credentials_file). A daemon whose API is on the unix socket
// only serves plain HTTP with no token, and only on a loopback address: Listen
// (and the config) refuse another.
package web

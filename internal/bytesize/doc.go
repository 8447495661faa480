// Package bytesize reads and writes memory sizes as people write them
// ("64GiB", "1.5GB", "80%"): the host's config and the CUDA backend's
// -device-memory-cap flag read them alike. It imports only the standard
// library, so a backend takes the notation without the host's packages.
package bytesize

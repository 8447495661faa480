// Package shm is the host's side of the shared-memory partitions: it writes each
// synthesized partition (W, A, B) into a memfd, seals it, and hands back the
// sdk.PartitionHandle that a backend opens with sdk.OpenPartition. It is in the SDK
// so that the conformance suites (sdktest, synthtest) hand a plugin its partitions
// exactly as the host does.
//
// A memfd is an anonymous file in RAM (memfd_create(2)): one copy of the
// partition that the backend maps without any I/O, with no directory to create,
// secure or fill, and no size limit but memory (which the host's budget counts).
// Once written it is sealed with F_SEAL_WRITE, F_SEAL_SHRINK, F_SEAL_GROW and
// F_SEAL_SEAL: the kernel then refuses any change to its bytes, by this process
// or any other, so the backend proves exactly what the host wrote without either
// side hashing hundreds of megabytes. The backend reaches it through
// /proc/<host pid>/fd/<n> (it is the host's child and runs as the same user);
// the handle also carries the file's inode, so a descriptor number reused after
// a Remove is never mistaken for the partition that had it.
//
// The memfds live as long as the host holds them, plus a backend's mapping: a
// host that crashes leaves nothing behind to reap.
package shm

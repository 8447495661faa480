//go:build !cuda

package gpu

// ClassifyScalars classifies device scalars; without CUDA an error.
func ClassifyScalars(buf *Buffer, off, n int, s *Stream) (*ScalarSplit, error) {
	return nil, errNoCUDABuild
}

// Free releases the split; without CUDA there is nothing to release.
func (s *ScalarSplit) Free() error { return nil }

// MSMSplit computes a split MSM; without CUDA an error.
func (b *Bases[A, J, S]) MSMSplit(sp *ScalarSplit, lo, n int, s *Stream) (J, MSMTiming, error) {
	var res J
	return res, MSMTiming{}, errNoCUDABuild
}

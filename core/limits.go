package core

import (
	"fmt"
	"math"
	"time"
)

// DefaultMaxTensorBytes is Options.MaxTensorBytes when it is left 0: 256 MiB.
const DefaultMaxTensorBytes = 256 << 20

// DefaultEnsembleStepWait is Options.EnsembleStepWait when it is left 0:
// Triton's bound (kMutexTimeoutSeconds) on the wait for a step slot.
const DefaultEnsembleStepWait = 300 * time.Second

// Bounds on what a model configuration can make the server allocate when
// the model loads. Triton has none, and a configuration that asks for more
// would exhaust memory (the runtime then ends the process, whatever
// --exit-on-error says); the model fails to load instead, with an error
// that names the setting.
const (
	// maxInstances bounds the instances of one model version: the
	// instance_group counts, times the GPUs of KIND_GPU groups. Each is a
	// goroutine and an execution context in its backend.
	maxInstances = 1 << 12
)

// mulInt64 returns a*b for a, b >= 0, and false when the product does not
// fit in an int64.
func mulInt64(a, b int64) (int64, bool) {
	if a != 0 && b > math.MaxInt64/a {
		return 0, false
	}
	return a * b, true
}

// fixedByteSize returns the byte size of count elements of dtype, counting
// a BYTES element as its 4-byte length prefix (an empty string), and false
// when it does not fit in an int64.
func fixedByteSize(dtype DataType, count int64) (int64, bool) {
	elem := int64(dtype.ByteSize())
	if dtype == TypeBytes {
		elem = 4
	}
	return mulInt64(count, elem)
}

// tensorLimit is the largest tensor the server holds (Options.MaxTensorBytes)
// and the name of the setting an operator changes it with, for messages.
type tensorLimit struct {
	bytes   int64
	setting string
}

// tooLarge describes a tensor of size bytes (-1: more than an int64 counts)
// that the limit refuses.
func (l tensorLimit) tooLarge(size int64) string {
	if size < 0 {
		return fmt.Sprintf("more bytes than an int64 counts, and the largest tensor the server holds is %d bytes (%s)", l.bytes, l.setting)
	}
	return fmt.Sprintf("%d bytes, more than the largest tensor the server holds, %d bytes (%s)", size, l.bytes, l.setting)
}

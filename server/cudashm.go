package server

import (
	"github.com/tritonhost/tritonhost/internal/gpu"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

var _ sharedmem.CUDA = (*gpu.Devices)(nil)

// cudaSharedMemory configures CUDA shared-memory regions: opened on the
// GPUs the CUDA driver opened, none without them (registering is then
// refused as Triton built without GPU support refuses it). An input in a
// region is copied to the host only up to the largest tensor the server
// holds, --grpc-max-message-size.
func (c *Config) cudaSharedMemory(g *serverGPUs) sharedmem.CUDAOptions {
	opts := sharedmem.CUDAOptions{MaxRegions: c.SharedMemory.CUDAMaxRegions, MaxReadBytes: uint64(c.GRPC.MaxMessageBytes)}
	if g.devices != nil { // a nil *gpu.Devices must not become a non-nil interface
		opts.Driver = g.devices
	}
	return opts
}

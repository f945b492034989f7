package grpcserver

import (
	"context"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// CUDA shared memory (Triton's cuda_shared_memory extension): a client
// registers device memory by its CUDA IPC handle, and names the region in
// a tensor's shared_memory_region parameter as for system shared memory
// (the same registry, namespace and bounds checks). An input there is
// copied from the device to the host when the request is decoded; an
// output is copied to the device as its response arrives. On a server
// without GPUs (no CUDA driver in the registry) registering is refused as
// Triton built without GPU support refuses it, and Status and Unregister
// find no region, so clients that clear every region before they start
// go on.

// extensions returns the extensions ServerMetadata lists.
func (s *Service) extensions() []string {
	return protocol.ServerExtensions(s.opts.SharedMemory.CUDASupported())
}

// CudaSharedMemoryStatus reports the registered CUDA regions, or the one
// named.
func (s *Service) CudaSharedMemoryStatus(_ context.Context, req *pb.CudaSharedMemoryStatusRequest) (*pb.CudaSharedMemoryStatusResponse, error) {
	regions, err := s.opts.SharedMemory.CUDAStatus(req.GetName())
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.CudaSharedMemoryStatusResponse{Regions: make(map[string]*pb.CudaSharedMemoryStatusResponse_RegionStatus, len(regions))}
	for _, r := range regions {
		resp.Regions[r.Name] = &pb.CudaSharedMemoryStatusResponse_RegionStatus{Name: r.Name, DeviceId: r.DeviceID, ByteSize: r.ByteSize}
	}
	return resp, nil
}

// CudaSharedMemoryRegister opens a client's device memory, by its CUDA IPC
// handle, on the GPU it names, as a region requests may read inputs from
// and write outputs to.
func (s *Service) CudaSharedMemoryRegister(_ context.Context, req *pb.CudaSharedMemoryRegisterRequest) (*pb.CudaSharedMemoryRegisterResponse, error) {
	if err := s.clientSharedMemory(); err != nil {
		return nil, err
	}
	if err := s.opts.SharedMemory.RegisterCUDA(req.GetName(), req.GetRawHandle(), req.GetDeviceId(), req.GetByteSize()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.CudaSharedMemoryRegisterResponse{}, nil
}

// CudaSharedMemoryUnregister removes the CUDA region named, or every CUDA
// region when no name is given; a handle is closed once no request in
// flight uses its region.
func (s *Service) CudaSharedMemoryUnregister(_ context.Context, req *pb.CudaSharedMemoryUnregisterRequest) (*pb.CudaSharedMemoryUnregisterResponse, error) {
	if err := s.clientSharedMemory(); err != nil {
		return nil, err
	}
	if err := s.opts.SharedMemory.UnregisterCUDA(req.GetName()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.CudaSharedMemoryUnregisterResponse{}, nil
}

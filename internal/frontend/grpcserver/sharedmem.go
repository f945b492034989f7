package grpcserver

import (
	"context"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
)

// SystemSharedMemoryStatus reports the registered system shared-memory
// regions, or the one named.
func (s *Service) SystemSharedMemoryStatus(_ context.Context, req *pb.SystemSharedMemoryStatusRequest) (*pb.SystemSharedMemoryStatusResponse, error) {
	regions, err := s.opts.SharedMemory.Status(req.GetName())
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.SystemSharedMemoryStatusResponse{Regions: make(map[string]*pb.SystemSharedMemoryStatusResponse_RegionStatus, len(regions))}
	for _, r := range regions {
		resp.Regions[r.Name] = &pb.SystemSharedMemoryStatusResponse_RegionStatus{Name: r.Name, Key: r.Key, Offset: r.Offset, ByteSize: r.ByteSize}
	}
	return resp, nil
}

// SystemSharedMemoryRegister maps a span of a POSIX shared-memory object as
// a named region that requests may read inputs from and write outputs to.
func (s *Service) SystemSharedMemoryRegister(_ context.Context, req *pb.SystemSharedMemoryRegisterRequest) (*pb.SystemSharedMemoryRegisterResponse, error) {
	if err := s.clientSharedMemory(); err != nil {
		return nil, err
	}
	if err := s.opts.SharedMemory.Register(req.GetName(), req.GetKey(), req.GetOffset(), req.GetByteSize()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.SystemSharedMemoryRegisterResponse{}, nil
}

// SystemSharedMemoryUnregister removes the region named, or every region
// when no name is given; requests in flight keep what they use.
func (s *Service) SystemSharedMemoryUnregister(_ context.Context, req *pb.SystemSharedMemoryUnregisterRequest) (*pb.SystemSharedMemoryUnregisterResponse, error) {
	if err := s.clientSharedMemory(); err != nil {
		return nil, err
	}
	if err := s.opts.SharedMemory.Unregister(req.GetName()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.SystemSharedMemoryUnregisterResponse{}, nil
}

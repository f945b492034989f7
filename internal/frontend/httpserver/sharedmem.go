package httpserver

import (
	"encoding/base64"
	"net/http"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/internal/sharedmem"
)

// The system and CUDA shared-memory routes, on the registry the server
// shares with the gRPC frontend: a region one protocol registers, the other
// sees. The errors are the registry's, in Triton's words.

// regionStatus is one region as Triton's status route lists it.
type regionStatus struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Offset   uint64 `json:"offset"`
	ByteSize uint64 `json:"byte_size"`
}

// systemShmStatus lists the registered regions, or the one named.
func (s *Server) systemShmStatus(w http.ResponseWriter, r *http.Request) {
	regions, err := s.opts.SharedMemory.Status(r.PathValue("region"))
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]regionStatus, 0, len(regions))
	for _, rg := range regions {
		out = append(out, regionStatus{Name: rg.Name, Key: rg.Key, Offset: rg.Offset, ByteSize: rg.ByteSize})
	}
	writeJSON(w, http.StatusOK, out)
}

// systemShmRegister registers a region from a body {"key": ...,
// "offset": ..., "byte_size": ...} (offset optional).
func (s *Server) systemShmRegister(w http.ResponseWriter, r *http.Request) {
	if err := s.clientSharedMemory(); err != nil {
		writeError(w, err)
		return
	}
	name := r.PathValue("region")
	if name == "" {
		writeError(w, core.Errorf(core.CodeInvalidArg, "'region name' is necessary to register system shared memory region"))
		return
	}
	var req struct {
		Key      *string `json:"key"`
		Offset   uint64  `json:"offset"`
		ByteSize *uint64 `json:"byte_size"`
	}
	err := s.readJSON(w, r, &req)
	switch {
	case err != nil:
	case req.Key == nil:
		err = core.Errorf(core.CodeInvalidArg, "Shared memory register request has no 'key' field")
	case req.ByteSize == nil:
		err = core.Errorf(core.CodeInvalidArg, "Shared memory register request has no 'byte_size' field")
	default:
		err = s.opts.SharedMemory.Register(name, *req.Key, req.Offset, *req.ByteSize)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// systemShmUnregister removes the region named, or every region.
func (s *Server) systemShmUnregister(w http.ResponseWriter, r *http.Request) {
	if err := s.clientSharedMemory(); err != nil {
		writeError(w, err)
		return
	}
	if err := s.opts.SharedMemory.Unregister(r.PathValue("region")); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// cudaRegionStatus is one CUDA region as Triton's status route lists it.
type cudaRegionStatus struct {
	Name     string `json:"name"`
	DeviceID uint64 `json:"device_id"`
	ByteSize uint64 `json:"byte_size"`
}

// cudaShmStatus lists the registered CUDA regions, or the one named (none
// on a server without GPUs).
func (s *Server) cudaShmStatus(w http.ResponseWriter, r *http.Request) {
	regions, err := s.opts.SharedMemory.CUDAStatus(r.PathValue("region"))
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]cudaRegionStatus, 0, len(regions))
	for _, rg := range regions {
		out = append(out, cudaRegionStatus{Name: rg.Name, DeviceID: rg.DeviceID, ByteSize: rg.ByteSize})
	}
	writeJSON(w, http.StatusOK, out)
}

// cudaShmRegister registers a CUDA region from a body {"raw_handle":
// {"b64": ...}, "device_id": ..., "byte_size": ...}, the client's
// cudaIpcMemHandle_t in base64; a server without GPUs refuses it as
// Triton built without GPU support does.
func (s *Server) cudaShmRegister(w http.ResponseWriter, r *http.Request) {
	if err := s.clientSharedMemory(); err != nil {
		writeError(w, err)
		return
	}
	name := r.PathValue("region")
	if name == "" {
		writeError(w, core.Errorf(core.CodeInvalidArg, "'region name' is necessary to register cuda shared memory region"))
		return
	}
	if !s.opts.SharedMemory.CUDASupported() { // Triton without GPUs reads no further
		writeError(w, s.opts.SharedMemory.RegisterCUDA(name, nil, 0, 0))
		return
	}
	var req struct {
		RawHandle *struct {
			B64 string `json:"b64"`
		} `json:"raw_handle"`
		DeviceID *int64  `json:"device_id"`
		ByteSize *uint64 `json:"byte_size"`
	}
	err := s.readJSON(w, r, &req)
	var handle []byte
	switch {
	case err != nil:
	case req.RawHandle == nil:
		err = core.Errorf(core.CodeInvalidArg, "Shared memory register request has no 'raw_handle' field")
	case req.DeviceID == nil:
		err = core.Errorf(core.CodeInvalidArg, "Shared memory register request has no 'device_id' field")
	case req.ByteSize == nil:
		err = core.Errorf(core.CodeInvalidArg, "Shared memory register request has no 'byte_size' field")
	default:
		if handle, err = base64.StdEncoding.DecodeString(req.RawHandle.B64); err != nil {
			err = core.Errorf(core.CodeInvalidArg, "'raw_handle' of cuda shared memory region '%s' is not valid base64: %v", name, err)
		} else {
			err = s.opts.SharedMemory.RegisterCUDA(name, handle, *req.DeviceID, *req.ByteSize)
		}
	}
	if err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// cudaShmUnregister removes the CUDA region named, or every one.
func (s *Server) cudaShmUnregister(w http.ResponseWriter, r *http.Request) {
	if err := s.clientSharedMemory(); err != nil {
		writeError(w, err)
		return
	}
	if err := s.opts.SharedMemory.UnregisterCUDA(r.PathValue("region")); err != nil {
		writeError(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// sharedMemoryRoutes maps the shared-memory routes, with and without a
// region.
func (s *Server) sharedMemoryRoutes(mux *http.ServeMux) {
	for _, base := range []string{"/v2/systemsharedmemory", "/v2/systemsharedmemory/region/{region}"} {
		mux.HandleFunc("GET "+base+"/status", s.systemShmStatus)
		mux.HandleFunc("POST "+base+"/register", s.systemShmRegister)
		mux.HandleFunc("POST "+base+"/unregister", s.systemShmUnregister)
	}
	for _, base := range []string{"/v2/cudasharedmemory", "/v2/cudasharedmemory/region/{region}"} {
		mux.HandleFunc("GET "+base+"/status", s.cudaShmStatus)
		mux.HandleFunc("POST "+base+"/register", s.cudaShmRegister)
		mux.HandleFunc("POST "+base+"/unregister", s.cudaShmUnregister)
	}
}

// SharedMemory returns the registry of system shared-memory regions.
func (s *Server) SharedMemory() *sharedmem.Registry { return s.opts.SharedMemory }

package server

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tritonhost/tritonhost/core"
	"github.com/tritonhost/tritonhost/core/serverlog"
	"github.com/tritonhost/tritonhost/internal/gpu"
)

// parse reads the pool sizes and checks the GPU settings (cudaRegions:
// --cuda-shm-max-regions).
func (g *GPUConfig) parse(cudaRegions int) (map[int]uint64, error) {
	pools := map[int]uint64{}
	for _, s := range g.CUDAPools {
		id, size, ok := strings.Cut(s, ":")
		n, err1 := strconv.Atoi(id)
		b, err2 := strconv.ParseUint(size, 10, 64)
		if !ok || err1 != nil || err2 != nil || n < 0 {
			return nil, fmt.Errorf("--cuda-memory-pool-byte-size %q: want <integer>:<integer>", s)
		}
		pools[n] = b
	}
	if g.PinnedPoolBytes < 0 {
		return nil, errors.New("--pinned-memory-pool-byte-size must not be negative")
	}
	if cudaRegions <= 0 {
		return nil, errors.New("--cuda-shm-max-regions must be positive")
	}
	if g.MinComputeCapability < 0 {
		return nil, errors.New("--min-supported-compute-capability must not be negative")
	}
	return pools, nil
}

// serverGPUs are the GPUs a serve run uses: none, or those the CUDA driver
// opened (their pools and contexts).
type serverGPUs struct {
	nvml      gpu.NVML // initialized, or nil
	discovery gpu.Discovery
	devices   *gpu.Devices   // nil: no GPU in use
	metrics   *gpu.Collector // nil: --allow-gpu-metrics=false
}

// open discovers the GPUs, logs them, and opens the CUDA driver on the
// usable ones. No NVML, no GPU or no CUDA driver means a CPU-only server,
// said once in the log, not an error.
func (g *GPUConfig) open(log *serverlog.Logger, pools map[int]uint64) *serverGPUs {
	lib := gpu.OpenNVML(g.NVMLLibrary)
	visible, set := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	d := gpu.Discover(lib, gpu.DiscoverOptions{VisibleDevices: visible, VisibleSet: set, MinComputeCapability: g.MinComputeCapability})
	d.Log(log)
	s := &serverGPUs{discovery: d}
	if d.Unavailable == "" {
		s.nvml = lib
	}
	if g.AllowMetrics {
		s.metrics = gpu.NewCollector(d)
	}
	ids := d.Usable()
	if len(ids) == 0 {
		return s
	}
	drv, err := gpu.OpenDriver(g.DriverLibrary)
	if err != nil {
		log.Warnf("0 GPUs usable: %d found, but %v; serving CPU instances only", len(ids), err)
		return s
	}
	devs, err := gpu.NewDevices(drv, ids, gpu.MemoryOptions{CUDAPoolBytes: pools, PinnedPoolBytes: uint64(g.PinnedPoolBytes)}, log)
	if err != nil {
		log.Warnf("0 GPUs usable: CUDA driver %s: %v; serving CPU instances only", drv.Path(), err)
		return s
	}
	log.Infof("CUDA driver %s (CUDA %s) opened on GPU(s) %v", drv.Path(), drv.Version(), devs.IDs())
	s.devices = devs
	return s
}

// metricsCollector returns the GPU figures for the /metrics endpoint to
// register (nv_gpu_utilization, ...), nil with --allow-gpu-metrics=false.
func (s *serverGPUs) metricsCollector() prometheus.Collector {
	if s.metrics == nil {
		return nil
	}
	return s.metrics
}

// ids returns the CUDA ids instances may be placed on.
func (s *serverGPUs) ids() []int {
	if s.devices == nil {
		return nil
	}
	return s.devices.IDs()
}

// hostDevices returns the devices for abi and core, nil without GPUs.
func (s *serverGPUs) hostDevices() core.Devices {
	if s.devices == nil {
		return nil
	}
	return s.devices
}

// close releases the pools, contexts and NVML, once the server stopped.
func (s *serverGPUs) close(log *serverlog.Logger) {
	if s.devices != nil {
		if err := s.devices.Close(); err != nil {
			log.Warnf("releasing GPU memory: %v", err)
		}
	}
	if s.nvml != nil {
		_ = s.nvml.Shutdown()
	}
}

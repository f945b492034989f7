package gpu

import "fmt"

// NVML is what the server asks of NVML: initialization, the driver's
// version and each GPU's handle. Its methods are those of go-nvml's
// nvml.Interface with the same names and meanings, on this package's
// types: the server implements it on libnvidia-ml.so.1 (OpenNVML), the
// tests adapt go-nvml's mock to it (doc.go says why go-nvml's own loader
// is not used). Nothing but Init may be called until Init succeeded.
type NVML interface {
	Init() NVMLReturn
	Shutdown() NVMLReturn
	ErrorString(NVMLReturn) string
	SystemGetDriverVersion() (string, NVMLReturn)
	DeviceGetCount() (int, NVMLReturn)
	DeviceGetHandleByIndex(int) (NVMLDevice, NVMLReturn)
}

// NVMLDevice is one GPU's NVML handle: what discovery and the metrics
// read, as go-nvml's nvml.Device methods of the same names.
type NVMLDevice interface {
	GetUUID() (string, NVMLReturn)
	GetName() (string, NVMLReturn)
	GetMemoryInfo() (NVMLMemory, NVMLReturn)
	GetCudaComputeCapability() (int, int, NVMLReturn)
	GetUtilizationRates() (NVMLUtilization, NVMLReturn)
	GetPowerUsage() (uint32, NVMLReturn)
	GetEnforcedPowerLimit() (uint32, NVMLReturn)
	GetTotalEnergyConsumption() (uint64, NVMLReturn)
}

// NVMLMemory is nvmlMemory_t: a GPU's memory in bytes, in NVML's layout.
type NVMLMemory struct {
	Total, Free, Used uint64
}

// NVMLUtilization is nvmlUtilization_t: the percentages of NVML's last
// sample period that the GPU and its memory were busy, in NVML's layout.
type NVMLUtilization struct {
	GPU, Memory uint32
}

// NVMLReturn is an NVML status (nvmlReturn_t), with NVML's values.
type NVMLReturn int32

// The NVML statuses the server tells apart.
const (
	NVMLSuccess               NVMLReturn = 0
	NVMLErrorUninitialized    NVMLReturn = 1
	NVMLErrorInvalidArgument  NVMLReturn = 2
	NVMLErrorNotSupported     NVMLReturn = 3
	NVMLErrorLibraryNotFound  NVMLReturn = 12
	NVMLErrorFunctionNotFound NVMLReturn = 13
	NVMLErrorUnknown          NVMLReturn = 999
)

// nvmlReturnNames are NVML's names of its statuses, without the NVML_
// prefix (as go-nvml spells them).
var nvmlReturnNames = map[NVMLReturn]string{
	0: "SUCCESS", 1: "ERROR_UNINITIALIZED", 2: "ERROR_INVALID_ARGUMENT", 3: "ERROR_NOT_SUPPORTED",
	4: "ERROR_NO_PERMISSION", 5: "ERROR_ALREADY_INITIALIZED", 6: "ERROR_NOT_FOUND",
	7: "ERROR_INSUFFICIENT_SIZE", 8: "ERROR_INSUFFICIENT_POWER", 9: "ERROR_DRIVER_NOT_LOADED",
	10: "ERROR_TIMEOUT", 11: "ERROR_IRQ_ISSUE", 12: "ERROR_LIBRARY_NOT_FOUND", 13: "ERROR_FUNCTION_NOT_FOUND",
	14: "ERROR_CORRUPTED_INFOROM", 15: "ERROR_GPU_IS_LOST", 16: "ERROR_RESET_REQUIRED",
	17: "ERROR_OPERATING_SYSTEM", 18: "ERROR_LIB_RM_VERSION_MISMATCH", 19: "ERROR_IN_USE",
	20: "ERROR_MEMORY", 21: "ERROR_NO_DATA", 22: "ERROR_VGPU_ECC_NOT_SUPPORTED",
	23: "ERROR_INSUFFICIENT_RESOURCES", 24: "ERROR_FREQ_NOT_SUPPORTED", 25: "ERROR_ARGUMENT_VERSION_MISMATCH",
	26: "ERROR_DEPRECATED", 27: "ERROR_NOT_READY", 28: "ERROR_GPU_NOT_FOUND", 29: "ERROR_INVALID_STATE",
	30: "ERROR_RESET_TYPE_NOT_SUPPORTED", 999: "ERROR_UNKNOWN",
}

// Error returns NVML's name of the status.
func (r NVMLReturn) Error() string {
	if name, ok := nvmlReturnNames[r]; ok {
		return name
	}
	return fmt.Sprintf("NVML status %d", int32(r))
}

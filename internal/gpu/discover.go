package gpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultMinComputeCapability is Triton's --min-supported-compute-capability.
const DefaultMinComputeCapability = 6.0

// GPU is one GPU as discovery found it.
type GPU struct {
	// ID is the CUDA device ordinal: the index CUDA gives the GPU after
	// CUDA_VISIBLE_DEVICES, which instance groups and memory type ids use.
	ID int
	// NVMLIndex is NVML's index of the GPU (PCI bus order, all GPUs).
	NVMLIndex   int
	UUID        string
	Name        string
	MemoryBytes uint64 // total device memory
	// Major and Minor are the CUDA compute capability.
	Major, Minor int
	// Hidden says why the GPU is not used ("" when it is).
	Hidden string

	dev NVMLDevice
}

// Capability returns the compute capability as "major.minor".
func (g GPU) Capability() string { return fmt.Sprintf("%d.%d", g.Major, g.Minor) }

// DiscoverOptions configure Discover.
type DiscoverOptions struct {
	// VisibleDevices is CUDA_VISIBLE_DEVICES, used when VisibleSet.
	VisibleDevices string
	VisibleSet     bool
	// MinComputeCapability hides GPUs below it (0: DefaultMinComputeCapability).
	MinComputeCapability float64
}

// Discovery is what Discover found.
type Discovery struct {
	// GPUs are the visible GPUs in CUDA's order, ID 0 first, including
	// those hidden for their compute capability (Hidden says so).
	GPUs []GPU
	// Driver is the NVIDIA driver's version, "" without NVML.
	Driver string
	// Unavailable says why no GPU was looked for ("" when NVML answered).
	Unavailable string
	// Warnings are entries of CUDA_VISIBLE_DEVICES that were not used, and
	// GPUs that could not be read.
	Warnings []string
}

// Usable returns the IDs of the GPUs that are not hidden, ascending.
func (d Discovery) Usable() []int {
	var ids []int
	for _, g := range d.GPUs {
		if g.Hidden == "" {
			ids = append(ids, g.ID)
		}
	}
	return ids
}

// Discover lists the GPUs lib sees. If NVML cannot be initialized (no
// driver, no library), it returns a Discovery with no GPU and the reason in
// Unavailable, and asks NVML nothing more. Otherwise it leaves NVML
// initialized for the devices' later use (see Collector); the caller shuts
// it down with lib.Shutdown when done, only then.
func Discover(lib NVML, opts DiscoverOptions) Discovery {
	if ret := lib.Init(); ret != NVMLSuccess {
		return Discovery{Unavailable: "NVML: " + nvmlError(lib, ret)}
	}
	var d Discovery
	if v, ret := lib.SystemGetDriverVersion(); ret == NVMLSuccess {
		d.Driver = v
	}
	count, ret := lib.DeviceGetCount()
	if ret != NVMLSuccess {
		d.Unavailable = "NVML: counting GPUs: " + nvmlError(lib, ret)
		return d
	}
	all := make([]GPU, 0, count)
	for i := 0; i < count; i++ {
		g, err := readGPU(lib, i)
		if err != nil {
			d.Warnings = append(d.Warnings, err.Error())
			g = GPU{NVMLIndex: i, Hidden: err.Error()}
		}
		all = append(all, g)
	}
	visible := all
	if opts.VisibleSet {
		var warn []string
		visible, warn = applyVisibleDevices(all, opts.VisibleDevices)
		d.Warnings = append(d.Warnings, warn...)
	}
	minCC := opts.MinComputeCapability
	if minCC == 0 {
		minCC = DefaultMinComputeCapability
	}
	for id, g := range visible {
		g.ID = id
		if g.Hidden == "" && !meetsCapability(g.Major, g.Minor, minCC) {
			g.Hidden = fmt.Sprintf("compute capability %s is below --min-supported-compute-capability=%g", g.Capability(), minCC)
		}
		d.GPUs = append(d.GPUs, g)
	}
	return d
}

// readGPU reads what the table shows of NVML device i.
func readGPU(lib NVML, i int) (GPU, error) {
	dev, ret := lib.DeviceGetHandleByIndex(i)
	if ret != NVMLSuccess {
		return GPU{}, fmt.Errorf("NVML device %d: %s", i, nvmlError(lib, ret))
	}
	g := GPU{NVMLIndex: i, dev: dev}
	var err error
	read := func(what string, r NVMLReturn) {
		if r != NVMLSuccess && err == nil {
			err = fmt.Errorf("NVML device %d: %s: %s", i, what, nvmlError(lib, r))
		}
	}
	g.UUID, ret = dev.GetUUID()
	read("UUID", ret)
	g.Name, ret = dev.GetName()
	read("name", ret)
	mem, ret := dev.GetMemoryInfo()
	read("memory", ret)
	g.MemoryBytes = mem.Total
	g.Major, g.Minor, ret = dev.GetCudaComputeCapability()
	read("compute capability", ret)
	return g, err
}

// meetsCapability compares major.minor with a capability such as 6.0 or
// 7.5 (Triton's comparison, without floating-point surprises).
func meetsCapability(major, minor int, min float64) bool {
	return major*10+minor >= int(math.Round(min*10))
}

// applyVisibleDevices picks and orders GPUs as the CUDA runtime reads
// CUDA_VISIBLE_DEVICES: a comma-separated list of indices into all (NVML's
// order) or UUIDs ("GPU-..." or an unambiguous prefix of one); the list
// ends at its first entry that names no GPU, names one twice, or is a MIG
// device, and an empty list hides every GPU.
func applyVisibleDevices(all []GPU, list string) ([]GPU, []string) {
	var out []GPU
	var warn []string
	used := map[int]bool{}
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" && strings.TrimSpace(list) == "" {
			break
		}
		i, why := lookupVisible(all, entry)
		if why == "" && used[i] {
			why = "names a GPU listed before"
		}
		if why != "" {
			warn = append(warn, fmt.Sprintf("CUDA_VISIBLE_DEVICES=%q: entry %q %s; it and the entries after it are ignored, as CUDA does", list, entry, why))
			break
		}
		used[i] = true
		out = append(out, all[i])
	}
	return out, warn
}

// lookupVisible finds one CUDA_VISIBLE_DEVICES entry in all, or says why
// it names no GPU.
func lookupVisible(all []GPU, entry string) (int, string) {
	if n, err := strconv.Atoi(entry); err == nil {
		if n < 0 || n >= len(all) {
			return 0, fmt.Sprintf("is not a GPU index (there are %d GPUs)", len(all))
		}
		return n, ""
	}
	if strings.HasPrefix(entry, "MIG-") {
		return 0, "is a MIG device, which tritonhost does not place instances on"
	}
	if !strings.HasPrefix(entry, "GPU-") {
		return 0, "is neither an index nor a GPU UUID"
	}
	found := -1
	for i, g := range all {
		if g.UUID != "" && strings.HasPrefix(g.UUID, entry) {
			if found >= 0 {
				return 0, "matches more than one GPU UUID"
			}
			found = i
		}
	}
	if found < 0 {
		return 0, "matches no GPU UUID"
	}
	return found, ""
}

// nvmlError describes r as NVML does.
func nvmlError(lib NVML, r NVMLReturn) string {
	if l, ok := lib.(*nvmlLibrary); ok {
		if r == NVMLErrorLibraryNotFound {
			return fmt.Sprintf("%s could not be loaded (no NVIDIA driver)", l.path)
		}
		if desc := l.ErrorString(r); desc != r.Error() {
			return fmt.Sprintf("%s (%s)", r.Error(), desc)
		}
	}
	return r.Error()
}

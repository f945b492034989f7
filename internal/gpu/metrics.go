package gpu

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Figures are one GPU's figures at one moment, in Triton's units. A figure
// NVML could not give (an older driver, a GPU without power management) is
// left out: its Has flag is false.
type Figures struct {
	UUID string
	// Utilization is the fraction of the last sample period the GPU was
	// busy, 0 to 1.
	Utilization    float64
	HasUtilization bool
	// MemoryTotal and MemoryUsed are bytes of device memory.
	MemoryTotal, MemoryUsed uint64
	HasMemory               bool
	// PowerUsage and PowerLimit are watts.
	PowerUsage, PowerLimit  float64
	HasPowerUsage, HasLimit bool
	// Energy is joules used since the Collector was made (the server
	// started), as Triton counts it.
	Energy    float64
	HasEnergy bool
}

// Collector reads the GPUs' figures from NVML for Prometheus, under
// Triton's metric names with the label gpu_uuid. It reads NVML on every
// collection (a scrape), and only for GPUs that an initialized NVML
// reported. Safe for concurrent use.
type Collector struct {
	gpus []GPU

	mu          sync.Mutex
	energyStart map[string]uint64 // millijoules at the start, by UUID

	utilization, memTotal, memUsed, power, limit, energy *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a collector of the usable GPUs of d (none when NVML
// was unavailable), taking their energy counters as the starting point.
func NewCollector(d Discovery) *Collector {
	label := []string{"gpu_uuid"}
	c := &Collector{
		energyStart: map[string]uint64{},
		utilization: prometheus.NewDesc("nv_gpu_utilization", "GPU utilization rate [0.0 - 1.0)", label, nil),
		memTotal:    prometheus.NewDesc("nv_gpu_memory_total_bytes", "GPU total memory, in bytes", label, nil),
		memUsed:     prometheus.NewDesc("nv_gpu_memory_used_bytes", "GPU used memory, in bytes", label, nil),
		power:       prometheus.NewDesc("nv_gpu_power_usage", "GPU power usage in watts", label, nil),
		limit:       prometheus.NewDesc("nv_gpu_power_limit", "GPU power management limit in watts", label, nil),
		energy:      prometheus.NewDesc("nv_energy_consumption", "GPU energy consumption in joules since the Triton Server started", label, nil),
	}
	if d.Unavailable != "" {
		return c
	}
	for _, g := range d.GPUs {
		if g.Hidden != "" || g.dev == nil {
			continue
		}
		c.gpus = append(c.gpus, g)
		if mj, ret := g.dev.GetTotalEnergyConsumption(); ret == NVMLSuccess {
			c.energyStart[g.UUID] = mj
		}
	}
	return c
}

// Snapshot reads every GPU's figures now, in the order of their ids.
func (c *Collector) Snapshot() []Figures {
	out := make([]Figures, 0, len(c.gpus))
	for _, g := range c.gpus {
		f := Figures{UUID: g.UUID}
		if u, ret := g.dev.GetUtilizationRates(); ret == NVMLSuccess {
			f.Utilization, f.HasUtilization = float64(u.GPU)/100, true
		}
		if m, ret := g.dev.GetMemoryInfo(); ret == NVMLSuccess {
			f.MemoryTotal, f.MemoryUsed, f.HasMemory = m.Total, m.Used, true
		}
		if mw, ret := g.dev.GetPowerUsage(); ret == NVMLSuccess {
			f.PowerUsage, f.HasPowerUsage = float64(mw)/1000, true
		}
		if mw, ret := g.dev.GetEnforcedPowerLimit(); ret == NVMLSuccess {
			f.PowerLimit, f.HasLimit = float64(mw)/1000, true
		}
		if mj, ret := g.dev.GetTotalEnergyConsumption(); ret == NVMLSuccess {
			c.mu.Lock()
			start, ok := c.energyStart[g.UUID]
			if !ok || mj < start { // first reading, or the driver's counter restarted
				c.energyStart[g.UUID], start = mj, mj
			}
			c.mu.Unlock()
			f.Energy, f.HasEnergy = float64(mj-start)/1000, true
		}
		out = append(out, f)
	}
	return out
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.utilization, c.memTotal, c.memUsed, c.power, c.limit, c.energy} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range c.Snapshot() {
		gauge := func(d *prometheus.Desc, v float64, ok bool) {
			if ok {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, f.UUID)
			}
		}
		gauge(c.utilization, f.Utilization, f.HasUtilization)
		gauge(c.memTotal, float64(f.MemoryTotal), f.HasMemory)
		gauge(c.memUsed, float64(f.MemoryUsed), f.HasMemory)
		gauge(c.power, f.PowerUsage, f.HasPowerUsage)
		gauge(c.limit, f.PowerLimit, f.HasLimit)
		if f.HasEnergy {
			ch <- prometheus.MustNewConstMetric(c.energy, prometheus.CounterValue, f.Energy, f.UUID)
		}
	}
}

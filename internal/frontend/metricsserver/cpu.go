package metricsserver

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	descCPUUtil     = prometheus.NewDesc("nv_cpu_utilization", "CPU utilization rate [0.0 - 1.0], over the last polling interval", nil, nil)
	descCPUMemTotal = prometheus.NewDesc("nv_cpu_memory_total_bytes", "CPU total memory (RAM), in bytes", nil, nil)
	descCPUMemUsed  = prometheus.NewDesc("nv_cpu_memory_used_bytes", "CPU used memory (RAM), in bytes", nil, nil)
)

// cpuCollector serves the host's CPU utilization and memory as polled at
// the metrics interval (from /proc/stat and /proc/meminfo, as Triton: used
// memory is MemTotal - MemAvailable). A scrape reads the last poll.
type cpuCollector struct {
	proc                    string
	util, memTotal, memUsed atomic.Uint64 // float64 bits
	lastBusy, lastIdle      uint64        // the previous poll's jiffies (poller only)
}

func newCPUCollector(procRoot string) *cpuCollector { return &cpuCollector{proc: procRoot} }

// Describe implements prometheus.Collector.
func (c *cpuCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCPUUtil
	ch <- descCPUMemTotal
	ch <- descCPUMemUsed
}

// Collect implements prometheus.Collector.
func (c *cpuCollector) Collect(ch chan<- prometheus.Metric) {
	get := func(v *atomic.Uint64) float64 { return math.Float64frombits(v.Load()) }
	ch <- prometheus.MustNewConstMetric(descCPUUtil, prometheus.GaugeValue, get(&c.util))
	ch <- prometheus.MustNewConstMetric(descCPUMemTotal, prometheus.GaugeValue, get(&c.memTotal))
	ch <- prometheus.MustNewConstMetric(descCPUMemUsed, prometheus.GaugeValue, get(&c.memUsed))
}

// run polls every interval until ctx ends.
func (c *cpuCollector) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.poll()
		}
	}
}

// poll reads /proc once; a value that cannot be read is reported as 0.
func (c *cpuCollector) poll() {
	util := math.Float64frombits(c.util.Load()) // kept when no time passed
	if busy, idle, err := readCPUTimes(filepath.Join(c.proc, "stat")); err != nil {
		util = 0
	} else {
		db, di := busy-min(busy, c.lastBusy), idle-min(idle, c.lastIdle)
		if c.lastBusy+c.lastIdle > 0 && db+di > 0 {
			util = float64(db) / float64(db+di)
		}
		c.lastBusy, c.lastIdle = busy, idle
	}
	total, used, err := readMemory(filepath.Join(c.proc, "meminfo"))
	if err != nil {
		total, used = 0, 0
	}
	c.util.Store(math.Float64bits(util))
	c.memTotal.Store(math.Float64bits(float64(total)))
	c.memUsed.Store(math.Float64bits(float64(used)))
}

// readCPUTimes returns the busy (user, nice, system, irq, softirq, steal)
// and idle (idle, iowait) jiffies of the aggregate "cpu" line.
func readCPUTimes(path string) (busy, idle uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return 0, 0, fmt.Errorf("%s is empty", path)
	}
	fields := strings.Fields(sc.Text())
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("%s: no aggregate cpu line", path)
	}
	var v [8]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(fields[i+1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("%s: %v", path, err)
		}
	}
	// user nice system idle iowait irq softirq steal
	return v[0] + v[1] + v[2] + v[5] + v[6] + v[7], v[3] + v[4], nil
}

// readMemory returns MemTotal and MemTotal - MemAvailable, in bytes.
func readMemory(path string) (total, used uint64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	vals := map[string]uint64{}
	for _, line := range strings.Split(string(data), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		if n, err := strconv.ParseUint(fields[0], 10, 64); err == nil {
			vals[name] = n * 1024
		}
	}
	total, okT := vals["MemTotal"]
	avail, okA := vals["MemAvailable"]
	if !okT || !okA || avail > total {
		return 0, 0, fmt.Errorf("%s: no usable MemTotal and MemAvailable", path)
	}
	return total, total - avail, nil
}

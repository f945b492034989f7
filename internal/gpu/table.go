package gpu

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/tritonhost/tritonhost/core/serverlog"
)

// Table renders the GPUs as the start-up log shows them: one row per
// visible GPU with its CUDA id, UUID, name, memory and compute capability,
// and why it is not used when it is hidden.
func (d Discovery) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GPU\tUUID\tName\tMemory\tCompute\tStatus")
	for _, g := range d.GPUs {
		status := "used"
		if g.Hidden != "" {
			status = "hidden: " + g.Hidden
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.UUID, g.Name, formatBytes(g.MemoryBytes), g.Capability(), status)
	}
	_ = w.Flush()
	return strings.TrimRight(b.String(), "\n")
}

// Log writes the discovery to the server log once: the warnings, then
// "0 GPUs" with the reason, or the table.
func (d Discovery) Log(log *serverlog.Logger) {
	for _, w := range d.Warnings {
		log.Warnf("%s", w)
	}
	usable := len(d.Usable())
	switch {
	case d.Unavailable != "":
		log.Infof("0 GPUs: %s; serving CPU instances only", d.Unavailable)
	case len(d.GPUs) == 0:
		log.Infof("0 GPUs: NVML (driver %s) sees no visible GPU; serving CPU instances only", d.Driver)
	default:
		log.Infof("%d %s (%d visible, NVIDIA driver %s):\n%s", usable, plural(usable, "GPU"), len(d.GPUs), d.Driver, d.Table())
	}
}

// formatBytes renders a byte count in binary units, as "40.0 GiB".
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// plural returns noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

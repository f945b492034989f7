package trace

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/tritonhost/tritonhost/core"
)

// Flags are the command line's trace options, as Triton's: --trace-config
// (repeatable), and the older --trace-file, --trace-level (repeatable),
// --trace-rate, --trace-count and --trace-log-frequency, which Triton
// still takes with a warning. A nil pointer is a flag not given.
type Flags struct {
	Config       []string
	File         *string
	Levels       []string
	Rate         *string
	Count        *string
	LogFrequency *string
}

// Config is what the trace flags configure.
type Config struct {
	// Setting is the server's setting at start.
	Setting Setting
	// Options are the mode's options (--trace-config <mode>,<key>=<value>),
	// as the trace settings report them.
	Options map[string]string
	// URL, Resource and the batch span processor's bounds configure the
	// OpenTelemetry exporter (mode opentelemetry): the collector's OTLP/HTTP
	// traces endpoint, resource attributes (key=value; service.name is
	// triton-inference-server unless given), the span queue, the delay
	// between exports (ms) and the largest export.
	URL                   string
	Resource              map[string]string
	BSPMaxQueueSize       uint32
	BSPScheduleDelayMs    uint32
	BSPMaxExportBatchSize uint32
	// Warnings are what Triton prints about deprecated flags.
	Warnings []string
}

// DefaultURL is the OTLP/HTTP endpoint Triton exports to by default.
const DefaultURL = "http://localhost:4318/v1/traces"

// configSetting is one --trace-config: its mode ("" for a global
// setting), setting and value.
type configSetting struct{ mode, key, value string }

// Parse reads the flags as Triton's command line parser does, with its
// messages for what it refuses.
func (f Flags) Parse() (Config, error) {
	c := Config{Setting: DefaultSetting(), Options: map[string]string{}, URL: DefaultURL,
		Resource: map[string]string{"service.name": "triton-inference-server"}}
	var settings []configSetting
	for _, arg := range f.Config {
		s, err := parseConfigOption(arg)
		if err != nil {
			return c, err
		}
		settings = append(settings, s)
	}
	disable := false
	level := core.TraceLevelDisabled
	addLevel := func(v string) error {
		l, err := parseLevelOption(v)
		if err != nil {
			return err
		}
		disable = disable || l == core.TraceLevelDisabled
		level |= l
		return nil
	}
	for _, v := range f.Levels {
		c.Warnings = append(c.Warnings, "Warning: '--trace-level' has been deprecated and will be removed in future releases. Please use '--trace-config level=<OFF|TIMESTAMPS|TENSORS> instead.")
		if err := addLevel(v); err != nil {
			return c, badOption("--trace-level", err)
		}
	}
	if f.Rate != nil {
		c.Warnings = append(c.Warnings, "Warning: '--trace-rate' has been deprecated and will be removed in future releases. Please use '--trace-config rate=<rate value> instead.")
		n, err := parseInt(*f.Rate)
		if err != nil {
			return c, badOption("--trace-rate", err)
		}
		c.Setting.Rate = uint32(n)
	}
	if f.Count != nil {
		c.Warnings = append(c.Warnings, "Warning: '--trace-count' has been deprecated and will be removed in future releases. Please use '--trace-config count=<count value> instead.")
		n, err := parseInt(*f.Count)
		if err != nil {
			return c, badOption("--trace-count", err)
		}
		c.Setting.Count = int32(n)
	}
	if f.File != nil {
		c.Warnings = append(c.Warnings, "Warning: '--trace-file' has been deprecated and will be removed in future releases. Please use '--trace-config triton,file=<filepath> instead.")
		c.Setting.File = *f.File
	}
	if f.LogFrequency != nil {
		c.Warnings = append(c.Warnings, "Warning: '--trace-log-frequency' has been deprecated and will be removed in future releases. Please use '--trace-config triton,log-frequency=<log frequency value> instead.")
		n, err := parseInt(*f.LogFrequency)
		if err != nil {
			return c, badOption("--trace-log-frequency", err)
		}
		c.Setting.LogFrequency = uint32(n)
	}
	// Global settings, then the mode's.
	for _, s := range settings {
		if s.mode != "" {
			continue
		}
		var err error
		switch s.key {
		case "rate":
			var n int64
			n, err = parseInt(s.value)
			c.Setting.Rate = uint32(n)
		case "level":
			err = addLevel(s.value)
		case "mode":
			c.Setting.Mode, err = ParseMode(s.value)
		case "count":
			var n int64
			n, err = parseInt(s.value)
			c.Setting.Count = int32(n)
		}
		if err != nil {
			return c, badOption("--trace-config "+s.key, err)
		}
	}
	if level != core.TraceLevelDisabled || disable {
		c.Setting.Level = level
	}
	if disable {
		c.Setting.Level = core.TraceLevelDisabled
	}
	if err := c.modeSettings(settings, f); err != nil {
		return c, err
	}
	return c, nil
}

// modeSettings applies the settings of the mode in force and ignores the
// other mode's.
func (c *Config) modeSettings(settings []configSetting, f Flags) error {
	mode := c.Setting.Mode.String()
	if c.Setting.Mode == ModeOpenTelemetry {
		if f.File != nil {
			c.Warnings = append(c.Warnings, "Warning: '--trace-file' is deprecated and will be ignored with opentelemetry tracing mode. ")
			c.Setting.File = ""
		}
		if f.LogFrequency != nil {
			c.Warnings = append(c.Warnings, "Warning: '--trace-log-frequency' is deprecated and will be ignored with opentelemetry tracing mode.")
			c.Setting.LogFrequency = 0
		}
		c.BSPMaxQueueSize, c.BSPScheduleDelayMs, c.BSPMaxExportBatchSize = 2048, 5000, 512
		for env, dst := range map[string]*uint32{"OTEL_BSP_MAX_QUEUE_SIZE": &c.BSPMaxQueueSize,
			"OTEL_BSP_SCHEDULE_DELAY": &c.BSPScheduleDelayMs, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": &c.BSPMaxExportBatchSize} {
			if v, ok := os.LookupEnv(env); ok {
				n, err := strconv.ParseUint(v, 10, 32)
				if err != nil {
					return fmt.Errorf("Bad option: \"%s\".\ninvalid value: %s", env, v)
				}
				*dst = uint32(n)
			}
		}
	}
	for _, s := range settings {
		if s.mode != mode {
			continue
		}
		bad := func(err error) error { return badOption("--trace-config "+mode+","+s.key, err) }
		switch {
		case s.mode == "triton" && s.key == "file":
			c.Setting.File = s.value
		case s.mode == "triton" && s.key == "log-frequency":
			n, err := parseInt(s.value)
			if err != nil {
				return bad(err)
			}
			c.Setting.LogFrequency = uint32(n)
		case s.mode == "opentelemetry" && s.key == "url":
			c.URL = s.value
		case s.mode == "opentelemetry" && s.key == "resource":
			k, v, _ := strings.Cut(s.value, "=")
			c.Resource[k] = v
		case s.mode == "opentelemetry" && strings.HasPrefix(s.key, "bsp_"):
			n, err := strconv.ParseUint(s.value, 10, 32)
			if err != nil {
				return bad(fmt.Errorf("invalid value: %s", s.value))
			}
			switch s.key {
			case "bsp_max_queue_size":
				c.BSPMaxQueueSize = uint32(n)
			case "bsp_schedule_delay":
				c.BSPScheduleDelayMs = uint32(n)
			case "bsp_max_export_batch_size":
				c.BSPMaxExportBatchSize = uint32(n)
			}
		}
		if prev, ok := c.Options[s.key]; ok && s.key == "resource" {
			c.Options[s.key] = prev + "," + s.value
		} else {
			c.Options[s.key] = s.value
		}
	}
	if c.Setting.Mode == ModeOpenTelemetry {
		for k, v := range map[string]uint32{"bsp_max_queue_size": c.BSPMaxQueueSize, "bsp_schedule_delay": c.BSPScheduleDelayMs,
			"bsp_max_export_batch_size": c.BSPMaxExportBatchSize} {
			c.Options[k] = strconv.FormatUint(uint64(v), 10)
		}
	}
	return nil
}

// parseConfigOption reads one --trace-config: [<mode>,]<setting>=<value>.
func parseConfigOption(arg string) (configSetting, error) {
	format := fmt.Errorf("--trace-config option format is '<trace mode>,<setting>=<value>'. Got %s", arg)
	comma := strings.Index(arg, ",")
	var s configSetting
	switch {
	case comma == 0:
		return s, fmt.Errorf("No trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got %s", arg)
	case comma > 0:
		m, err := ParseMode(arg[:comma])
		if err != nil {
			return s, err
		}
		s.mode = m.String()
	}
	rest := arg[comma+1:]
	eq := strings.Index(rest, "=")
	if eq < 0 {
		return s, format
	}
	s.key, s.value = rest[:eq], rest[eq+1:]
	if s.key == "" || s.value == "" {
		return s, format
	}
	return s, nil
}

// parseLevelOption reads a level as Triton's command line does.
func parseLevelOption(v string) (core.TraceLevel, error) {
	switch strings.ToLower(v) {
	case "false", "off":
		return core.TraceLevelDisabled, nil
	case "true", "on", "min", "max", "timestamps":
		return core.TraceLevelTimestamps, nil
	case "tensors":
		return core.TraceLevelTensors, nil
	}
	return 0, fmt.Errorf("invalid value for trace level option: %s", strings.ToLower(v))
}

func parseInt(v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid value: %s", v)
	}
	return n, nil
}

func badOption(flag string, err error) error {
	return fmt.Errorf("Bad option: \"%s\".\n%v", flag, err)
}

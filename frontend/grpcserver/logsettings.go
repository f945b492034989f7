package grpcserver

import (
	"context"
	"os"

	"google.golang.org/grpc/codes"

	"tritonhost/core/serverlog"
	pb "tritonhost/frontend/inferencepb"
)

// LogSettings reads and changes the log settings: log_info, log_warning,
// log_error (bool), log_verbose_level (uint32), log_format ("default" or
// "ISO8601") and, where Options.AllowLogFile lets clients, log_file (""
// for standard error).
func (s *Service) LogSettings(_ context.Context, req *pb.LogSettingsRequest) (*pb.LogSettingsResponse, error) {
	l := s.core.Logger()
	// Every setting is checked before any is applied: a request with one
	// bad setting changes nothing.
	var apply []func() error
	for name, v := range req.GetSettings() {
		switch name {
		case "log_info", "log_warning", "log_error":
			b, ok := v.GetParameterChoice().(*pb.LogSettingsRequest_SettingValue_BoolParam)
			if !ok {
				return nil, errorf(codes.InvalidArgument, "log setting %q must be a bool", name)
			}
			level := map[string]serverlog.Level{"log_info": serverlog.Info, "log_warning": serverlog.Warning, "log_error": serverlog.Error}[name]
			apply = append(apply, func() error { l.SetEnabled(level, b.BoolParam); return nil })
		case "log_verbose_level":
			n, ok := v.GetParameterChoice().(*pb.LogSettingsRequest_SettingValue_Uint32Param)
			if !ok {
				return nil, errorf(codes.InvalidArgument, "log setting %q must be a uint32", name)
			}
			apply = append(apply, func() error { l.SetVerbose(int(n.Uint32Param)); return nil })
		case "log_format":
			f, ok := v.GetParameterChoice().(*pb.LogSettingsRequest_SettingValue_StringParam)
			if !ok || (f.StringParam != string(serverlog.FormatDefault) && f.StringParam != string(serverlog.FormatISO8601)) {
				return nil, errorf(codes.InvalidArgument, "log setting %q must be \"default\" or \"ISO8601\"", name)
			}
			apply = append(apply, func() error { l.SetFormat(serverlog.Format(f.StringParam)); return nil })
		case "log_file":
			f, ok := v.GetParameterChoice().(*pb.LogSettingsRequest_SettingValue_StringParam)
			if !ok {
				return nil, errorf(codes.InvalidArgument, "log setting %q must be a string", name)
			}
			if !s.opts.AllowLogFile {
				return nil, errorf(codes.PermissionDenied,
					"log setting %q: clients may not choose a file on the server's machine here; the operator can allow it with --allow-log-file-setting", name)
			}
			apply = append(apply, func() error {
				if err := s.setLogFile(l, f.StringParam); err != nil {
					return errorf(codes.InvalidArgument, "log setting %q: %v", name, err)
				}
				return nil
			})
		default:
			return nil, errorf(codes.InvalidArgument, "unknown log setting %q", name)
		}
	}
	for _, f := range apply {
		if err := f(); err != nil {
			return nil, err
		}
	}
	str := func(v string) *pb.LogSettingsResponse_SettingValue {
		return &pb.LogSettingsResponse_SettingValue{ParameterChoice: &pb.LogSettingsResponse_SettingValue_StringParam{StringParam: v}}
	}
	boolean := func(v bool) *pb.LogSettingsResponse_SettingValue {
		return &pb.LogSettingsResponse_SettingValue{ParameterChoice: &pb.LogSettingsResponse_SettingValue_BoolParam{BoolParam: v}}
	}
	s.logMu.Lock()
	file := s.logFile
	s.logMu.Unlock()
	return &pb.LogSettingsResponse{Settings: map[string]*pb.LogSettingsResponse_SettingValue{
		"log_file":    str(file),
		"log_info":    boolean(l.Enabled(serverlog.Info)),
		"log_warning": boolean(l.Enabled(serverlog.Warning)),
		"log_error":   boolean(l.Enabled(serverlog.Error)),
		"log_verbose_level": {ParameterChoice: &pb.LogSettingsResponse_SettingValue_Uint32Param{
			Uint32Param: uint32(l.VerboseLevel())}},
		"log_format": str(string(l.CurrentFormat())),
	}}, nil
}

func (s *Service) setLogFile(l *serverlog.Logger, path string) error {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if path == s.logFile {
		return nil
	}
	var next *os.File
	if path == "" {
		l.SetOutput(os.Stderr)
	} else {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		l.SetOutput(f)
		next = f
	}
	if s.logOut != nil {
		_ = s.logOut.Close()
	}
	s.logFile, s.logOut = path, next
	return nil
}

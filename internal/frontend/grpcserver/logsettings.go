package grpcserver

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// LogSettings reads and changes the log settings (see protocol.LogControl):
// log_info, log_warning, log_error (bool), log_verbose_level (uint32),
// log_format ("default" or "ISO8601") and, where Options.AllowLogFile lets
// clients, log_file ("" for standard error).
func (s *Service) LogSettings(_ context.Context, req *pb.LogSettingsRequest) (*pb.LogSettingsResponse, error) {
	if err := checkMap(req, len(req.GetSettings())); err != nil {
		return nil, toStatus(err)
	}
	settings := make(map[string]protocol.LogValue, len(req.GetSettings()))
	for name, v := range req.GetSettings() {
		var lv protocol.LogValue
		switch p := v.GetParameterChoice().(type) {
		case *pb.LogSettingsRequest_SettingValue_BoolParam:
			lv = protocol.LogValue{Kind: protocol.KindBool, Bool: p.BoolParam}
		case *pb.LogSettingsRequest_SettingValue_Uint32Param:
			lv = protocol.LogValue{Kind: protocol.KindUint, Uint: uint64(p.Uint32Param)}
		case *pb.LogSettingsRequest_SettingValue_StringParam:
			lv = protocol.LogValue{Kind: protocol.KindString, String: p.StringParam}
		}
		settings[name] = lv
	}
	if err := s.logs.Apply(settings); err != nil {
		if errors.Is(err, protocol.ErrLogFileNotAllowed) {
			return nil, errorf(codes.PermissionDenied, "%v", err)
		}
		return nil, toStatus(err)
	}
	cur := s.logs.Current()
	str := func(v string) *pb.LogSettingsResponse_SettingValue {
		return &pb.LogSettingsResponse_SettingValue{ParameterChoice: &pb.LogSettingsResponse_SettingValue_StringParam{StringParam: v}}
	}
	boolean := func(v bool) *pb.LogSettingsResponse_SettingValue {
		return &pb.LogSettingsResponse_SettingValue{ParameterChoice: &pb.LogSettingsResponse_SettingValue_BoolParam{BoolParam: v}}
	}
	return &pb.LogSettingsResponse{Settings: map[string]*pb.LogSettingsResponse_SettingValue{
		"log_file":    str(cur.File),
		"log_info":    boolean(cur.Info),
		"log_warning": boolean(cur.Warning),
		"log_error":   boolean(cur.Error),
		"log_verbose_level": {ParameterChoice: &pb.LogSettingsResponse_SettingValue_Uint32Param{
			Uint32Param: cur.VerboseLevel}},
		"log_format": str(cur.Format),
	}}, nil
}

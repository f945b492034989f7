package grpcserver

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	pb "github.com/tritonhost/tritonhost/internal/inferencepb"
	"github.com/tritonhost/tritonhost/internal/protocol"
)

// Maps counted on the wire. protobuf builds a map entry of a hundred bytes
// or more (its key, its value message, the map's own slot) for every
// entry of a few bytes in a message, so a message of the largest size the
// server takes could ask for gigabytes: a 24 MiB RepositoryModelLoadRequest
// of two million empty parameters took 344 MiB and 2 s of CPU to refuse.
// The codec counts the distinct keys of these requests' maps on the wire
// first and decodes no more than one past the bound (boundedMap), so the
// handler refuses the request (checkMap) having built no more than that.

// boundedMap is the map field of a request message that the codec counts
// on the wire, and the most distinct keys the server takes in it.
type boundedMap struct {
	field protowire.Number
	limit int
	what  string // the request and its entries, for checkMap's refusal
	items string
}

// boundedMapOf returns the map of msg the codec counts, if it has one.
func boundedMapOf(msg any) (boundedMap, bool) {
	switch msg.(type) {
	case *pb.RepositoryModelLoadRequest:
		return boundedMap{3, protocol.MaxLoadParameters, "the load request", "parameters"}, true
	case *pb.RepositoryModelUnloadRequest:
		return boundedMap{3, protocol.MaxLoadParameters, "the unload request", "parameters"}, true
	case *pb.TraceSettingRequest:
		return boundedMap{1, protocol.MaxRequestParameters, "the trace setting request", "settings"}, true
	case *pb.LogSettingsRequest:
		return boundedMap{1, protocol.MaxRequestParameters, "the log settings request", "settings"}, true
	}
	return boundedMap{}, false
}

// decodeBounded decodes b into v, a request message of boundedMapOf,
// keeping of its map field bm only the entries up to the first that
// brings the distinct keys past bm.limit: the message's other fields
// decode as they would, and a map within the bound decodes whole (its
// later entries of a key replacing earlier ones, as protobuf's do).
func decodeBounded(b []byte, v any, bm boundedMap) error {
	msg := v.(proto.Message)
	keys := map[string]struct{}{}
	var (
		rest    []byte // b without the entries dropped, once one is
		dropped bool
	)
	for at := 0; at < len(b); {
		num, typ, n := protowire.ConsumeTag(b[at:])
		if n < 0 {
			return malformedMessage(msg, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[at+n:])
		if m < 0 {
			return malformedMessage(msg, protowire.ParseError(m))
		}
		field := b[at : at+n+m]
		at += n + m
		drop := false
		if num == bm.field && typ == protowire.BytesType {
			if len(keys) > bm.limit {
				drop = true
			} else {
				entry, _ := protowire.ConsumeBytes(field[n:])
				key, err := mapKey(entry)
				if err != nil {
					return malformedMessage(msg, err)
				}
				keys[string(key)] = struct{}{}
			}
		}
		switch {
		case drop && !dropped:
			rest, dropped = append([]byte(nil), b[:at-len(field)]...), true
		case !drop && dropped:
			rest = append(rest, field...)
		}
	}
	if !dropped {
		rest = b
	}
	return proto.Unmarshal(rest, msg)
}

// mapKey returns the key of an encoded map entry (field 1; empty when the
// entry has none).
func mapKey(entry []byte) ([]byte, error) {
	var key []byte
	for len(entry) > 0 {
		num, typ, n := protowire.ConsumeTag(entry)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		var m int
		if num == 1 && typ == protowire.BytesType {
			key, m = protowire.ConsumeBytes(entry[n:])
		} else {
			m = protowire.ConsumeFieldValue(num, typ, entry[n:])
		}
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		entry = entry[n+m:]
	}
	return key, nil
}

func malformedMessage(msg proto.Message, err error) error {
	return fmt.Errorf("the request is not a valid %s: %w", proto.MessageName(msg).Name(), err)
}

// checkMap refuses a request whose map, counted on the wire, was past its
// bound: n is its entries as decoded, one past the bound at most when it
// came over the wire.
func checkMap(msg any, n int) error {
	bm, ok := boundedMapOf(msg)
	if !ok || n <= bm.limit {
		return nil
	}
	return protocol.MoreThan(bm.what, bm.items, bm.limit)
}

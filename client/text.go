package client

import (
	"strings"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// Text renders a message in protobuf text format, one field per line, with
// every nested line prefixed by indent. The spacing is stable: Go's text
// printer varies the space after a colon on purpose, so it is normalized to
// one.
func Text(m proto.Message, indent string) string {
	raw := prototext.MarshalOptions{Multiline: true, Indent: "  "}.Format(m)
	lines := strings.Split(strings.TrimRight(raw, "\n"), "\n")
	var b strings.Builder
	for _, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		if name, rest, ok := strings.Cut(trimmed, ":"); ok && !strings.ContainsAny(name, " \"") {
			trimmed = name + ": " + strings.TrimLeft(rest, " ")
		}
		b.WriteString(indent)
		b.WriteString(l[:len(l)-len(strings.TrimLeft(l, " "))])
		b.WriteString(trimmed)
		b.WriteByte('\n')
	}
	return b.String()
}

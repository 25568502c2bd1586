package conform

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// A minimal reader of the protobuf wire format, enough for FizzBee's two
// graph messages (proto/graph.proto):
//
//	message Nodes { repeated string json = 1; }
//	message Links { int64 total_nodes = 1; repeated Link links = 2; }
//	message Link  { int64 src = 1; int64 dest = 2; string name = 3;
//	                repeated string labels = 4; double weight = 5; ...
//	                string type = 9; ... }
//
// Unknown fields are skipped; groups (wire types 3 and 4) are refused.

type wireField struct {
	num    int
	typ    int    // 0 varint, 1 fixed64, 2 bytes, 5 fixed32
	varint uint64 // wire types 0, 1 and 5
	bytes  []byte // wire type 2
}

// wireFields splits a message into its fields.
func wireFields(b []byte) ([]wireField, error) {
	var out []wireField
	for len(b) > 0 {
		tag, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("%w: protobuf: truncated or overlong tag", ErrSyntax)
		}
		b = b[n:]
		f := wireField{num: int(tag >> 3), typ: int(tag & 7)}
		if tag>>3 == 0 || tag>>3 > math.MaxInt32 {
			return nil, fmt.Errorf("%w: protobuf: bad field number %d", ErrSyntax, tag>>3)
		}
		switch f.typ {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return nil, fmt.Errorf("%w: protobuf: field %d: truncated varint", ErrSyntax, f.num)
			}
			f.varint, b = v, b[n:]
		case 1:
			if len(b) < 8 {
				return nil, fmt.Errorf("%w: protobuf: field %d: truncated fixed64", ErrSyntax, f.num)
			}
			f.varint, b = binary.LittleEndian.Uint64(b), b[8:]
		case 5:
			if len(b) < 4 {
				return nil, fmt.Errorf("%w: protobuf: field %d: truncated fixed32", ErrSyntax, f.num)
			}
			f.varint, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return nil, fmt.Errorf("%w: protobuf: field %d: length runs past the end", ErrSyntax, f.num)
			}
			f.bytes, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return nil, fmt.Errorf("%w: protobuf: field %d: wire type %d", ErrSyntax, f.num, f.typ)
		}
		out = append(out, f)
	}
	return out, nil
}

func (f wireField) str() (string, error) {
	if f.typ != 2 {
		return "", fmt.Errorf("%w: protobuf: field %d: want a string, found wire type %d", ErrSyntax, f.num, f.typ)
	}
	if !utf8.Valid(f.bytes) {
		return "", fmt.Errorf("%w: protobuf: field %d: string is not UTF-8", ErrSyntax, f.num)
	}
	return string(f.bytes), nil
}

func (f wireField) int64() (int64, error) {
	if f.typ != 0 {
		return 0, fmt.Errorf("%w: protobuf: field %d: want a varint, found wire type %d", ErrSyntax, f.num, f.typ)
	}
	return int64(f.varint), nil
}

// fizzLink is one FizzBee proto Link, as far as the graph needs it.
type fizzLink struct {
	Src, Dest int64
	Name      string
	Type      string
	Labels    []string
}

// decodeFizzNodes decodes a Nodes message: one JSON string per node.
func decodeFizzNodes(b []byte) ([]string, error) {
	fields, err := wireFields(b)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range fields {
		if f.num != 1 {
			continue
		}
		s, err := f.str()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// decodeFizzLinks decodes a Links message.
func decodeFizzLinks(b []byte) (total int64, links []fizzLink, err error) {
	fields, err := wireFields(b)
	if err != nil {
		return 0, nil, err
	}
	for _, f := range fields {
		switch f.num {
		case 1:
			if total, err = f.int64(); err != nil {
				return 0, nil, err
			}
		case 2:
			if f.typ != 2 {
				return 0, nil, fmt.Errorf("%w: protobuf: link: wire type %d", ErrSyntax, f.typ)
			}
			sub, err := wireFields(f.bytes)
			if err != nil {
				return 0, nil, fmt.Errorf("link %d: %w", len(links), err)
			}
			var l fizzLink
			for _, g := range sub {
				var err error
				switch g.num {
				case 1:
					l.Src, err = g.int64()
				case 2:
					l.Dest, err = g.int64()
				case 3:
					l.Name, err = g.str()
				case 4:
					var s string
					s, err = g.str()
					l.Labels = append(l.Labels, s)
				case 9:
					l.Type, err = g.str()
				}
				if err != nil {
					return 0, nil, fmt.Errorf("link %d: %w", len(links), err)
				}
			}
			links = append(links, l)
		}
	}
	return total, links, nil
}

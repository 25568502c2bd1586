//go:build goexperiment.jsonv2

package check_test

import (
	"encoding/json/jsontext"
	jsonv2 "encoding/json/v2"
	"errors"
	"fmt"
	"io"
)

// encoding/json/v2's decoders as BenchmarkDecode baselines: they exist
// only with GOEXPERIMENT=jsonv2 (Go 1.26), so `make bench-trace` sets it.
func init() {
	decodeBaselines = append(decodeBaselines,
		// json/v2's Unmarshal, one a line, into the same struct as
		// encoding/json's baseline (jsontext.Value for the raw values).
		decodeBaseline{"json-v2", func(r io.Reader) (int, error) {
			return eachLine(r, func(line []byte) error {
				var e jsonV2Event
				return jsonv2.Unmarshal(line, &e)
			})
		}},
		// jsontext's streaming decoder over the whole input, token by
		// token, as trace.Decoder scans: each event's fields, and its
		// state's values as raw JSON. It refuses repeated names (as
		// trace.Decoder does) but knows no field.
		decodeBaseline{"jsontext", func(r io.Reader) (int, error) {
			dec := jsontext.NewDecoder(r)
			n := 0
			for {
				err := jsontextEvent(dec)
				if err == io.EOF {
					return n, nil
				}
				if err != nil {
					return n, fmt.Errorf("event %d: %w", n+1, err)
				}
				n++
			}
		}},
	)
}

// jsonV2Event is jsonEvent for json/v2.
type jsonV2Event struct {
	V        int                       `json:"v"`
	Instance string                    `json:"instance"`
	Seq      uint64                    `json:"seq"`
	Action   string                    `json:"action"`
	Part     string                    `json:"part"`
	Stutter  bool                      `json:"stutter"`
	State    map[string]jsontext.Value `json:"state"`
	Time     jsontext.Value            `json:"time"`
	Detail   jsontext.Value            `json:"detail"`
}

var errNotEvent = errors.New("not an event object")

// jsontextEvent reads one event from dec: its top-level members, and the
// state's members as raw values.
func jsontextEvent(dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if tok.Kind() != '{' {
		return errNotEvent
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if name.String() != "state" {
			if _, err := dec.ReadValue(); err != nil {
				return err
			}
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return errors.Join(errNotEvent, err)
		}
		for dec.PeekKind() != '}' {
			if _, err := dec.ReadToken(); err != nil { // the variable's name
				return err
			}
			if _, err := dec.ReadValue(); err != nil { // its raw value
				return err
			}
		}
		if _, err := dec.ReadToken(); err != nil { // the state's '}'
			return err
		}
	}
	_, err = dec.ReadToken() // the event's '}'
	return err
}

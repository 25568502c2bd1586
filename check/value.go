package check

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/trace"
)

// ErrUnserializable is returned by [ParseJSONValue] and [FromJSON] for a value
// that holds an ITF {"#unserializable": ...} anywhere: the writer could not
// render it. The checker leaves such a variable unconstrained for that
// event and never reports its instance as valid (at best incomplete).
var ErrUnserializable = errors.New("#unserializable value")

// ParseJSONValue converts one JSON value of a trace event (NDJSON or ITF)
// into a model.Value: booleans, integers and strings as themselves, arrays
// as sequences, plain objects as records, and the ITF forms {"#set":
// [...]}, {"#map": [[k, v], ...]} (a function, which is a sequence or a
// record when its domain is 1..n or strings: see [model.Func]), {"#tup":
// [...]} and {"#bigint": "123"} (within int64). A value holding
// {"#unserializable": ...} anywhere yields [ErrUnserializable]. Other input
// (floats, null, unknown "#" forms) is an error wrapping [ErrValue]. For
// TLA+ text as TLC prints it, see conform.ParseTLAValue.
func ParseJSONValue(raw []byte) (model.Value, error) {
	v, err := trace.DecodeValue(raw)
	if err != nil {
		return model.Value{}, fmt.Errorf("%w: %v", ErrValue, err)
	}
	return FromJSON(v)
}

// FromJSON converts a value as encoding/json decodes it (with or without
// UseNumber) into a model.Value; see [ParseJSONValue].
func FromJSON(v any) (model.Value, error) {
	switch x := v.(type) {
	case bool:
		return model.Bool(x), nil
	case string:
		return model.Str(x), nil
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return model.Value{}, fmt.Errorf("%w: %s is not a 64-bit integer", ErrValue, x)
		}
		return model.Int(i), nil
	case float64:
		if x != float64(int64(x)) {
			return model.Value{}, fmt.Errorf("%w: %v is not an integer", ErrValue, x)
		}
		return model.Int(int64(x)), nil
	case []any:
		elems, err := fromList(x)
		if err != nil {
			return model.Value{}, err
		}
		return model.Seq(elems...), nil
	case map[string]any:
		return fromObject(x)
	case nil:
		return model.Value{}, fmt.Errorf("%w: null", ErrValue)
	}
	return model.Value{}, fmt.Errorf("%w: unsupported %T", ErrValue, v)
}

func fromList(xs []any) ([]model.Value, error) {
	out := make([]model.Value, len(xs))
	for i, x := range xs {
		v, err := FromJSON(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func fromObject(m map[string]any) (model.Value, error) {
	if len(m) == 1 {
		for k, x := range m {
			if !strings.HasPrefix(k, "#") {
				break
			}
			switch k {
			case "#set", "#tup":
				xs, ok := x.([]any)
				if !ok {
					return model.Value{}, fmt.Errorf("%w: %s wants an array", ErrValue, k)
				}
				elems, err := fromList(xs)
				if err != nil {
					return model.Value{}, err
				}
				if k == "#set" {
					return model.Set(elems...), nil
				}
				return model.Seq(elems...), nil
			case "#map":
				xs, ok := x.([]any)
				if !ok {
					return model.Value{}, fmt.Errorf("%w: #map wants an array of pairs", ErrValue)
				}
				keys := make([]model.Value, len(xs))
				vals := make([]model.Value, len(xs))
				for i, p := range xs {
					kv, ok := p.([]any)
					if !ok || len(kv) != 2 {
						return model.Value{}, fmt.Errorf("%w: #map entry %d is not a [key, value] pair", ErrValue, i)
					}
					var err error
					if keys[i], err = FromJSON(kv[0]); err != nil {
						return model.Value{}, err
					}
					if vals[i], err = FromJSON(kv[1]); err != nil {
						return model.Value{}, err
					}
				}
				return model.Func(keys, vals)
			case "#bigint":
				s, ok := x.(string)
				if !ok {
					return model.Value{}, fmt.Errorf("%w: #bigint wants a string", ErrValue)
				}
				n, ok := new(big.Int).SetString(s, 10)
				if !ok {
					return model.Value{}, fmt.Errorf("%w: #bigint %q is not an integer", ErrValue, s)
				}
				if !n.IsInt64() {
					return model.Value{}, fmt.Errorf("%w: #bigint %s does not fit 64 bits", ErrValue, s)
				}
				return model.Int(n.Int64()), nil
			case "#unserializable":
				return model.Value{}, ErrUnserializable
			default:
				return model.Value{}, fmt.Errorf("%w: unknown ITF form %q", ErrValue, k)
			}
		}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	fields := make([]model.Field, len(names))
	for i, k := range names {
		v, err := FromJSON(m[k])
		if err != nil {
			return model.Value{}, err
		}
		fields[i] = model.Field{Name: k, Value: v}
	}
	return model.Record(fields...), nil
}

// valueCache memoizes ParseJSONValue by the raw JSON text. It is bounded: when
// full it is emptied, so memory stays flat whatever the trace.
type valueCache struct {
	m map[string]cachedValue
}

type cachedValue struct {
	v   model.Value
	err error
}

const maxCache = 1 << 16

func (c *valueCache) get(raw []byte) (model.Value, error) {
	if v, ok := quickValue(raw); ok {
		return v, nil
	}
	if e, ok := c.m[string(raw)]; ok { // no allocation: the compiler avoids the conversion
		return e.v, e.err
	}
	v, err := ParseJSONValue(raw)
	if c.m == nil || len(c.m) >= maxCache {
		c.m = make(map[string]cachedValue)
	}
	c.m[string(raw)] = cachedValue{v, err}
	return v, err
}

// quickValue converts the commonest values, small integers and booleans,
// without a map lookup.
func quickValue(raw []byte) (model.Value, bool) {
	switch string(raw) {
	case "true":
		return model.Bool(true), true
	case "false":
		return model.Bool(false), true
	}
	if len(raw) == 0 || len(raw) > 18 {
		return model.Value{}, false
	}
	neg := raw[0] == '-'
	d := raw
	if neg {
		d = raw[1:]
	}
	if len(d) == 0 || (d[0] == '0' && len(d) > 1) {
		return model.Value{}, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return model.Value{}, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return model.Int(n), true
}

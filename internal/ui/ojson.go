package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// object is a JSON object that keeps its members' order and, as the form
// sends what was typed, repeated keys, which the API then reports at their
// pointer rather than the console dropping one.
type object []member

type member struct {
	Key   string
	Value any
}

// get returns the value of key (the last one, as a decoder would), if any.
func (o object) get(key string) (any, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// maxDepth bounds the nesting the console decodes; the API allows 64 levels
// in a whole body.
const maxDepth = 64

// decodeOrdered decodes JSON into object, []any, json.Number, string, bool
// and nil, keeping the order of members.
func decodeOrdered(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d, 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("ui: json: more than one value")
	}
	return v, nil
}

func decodeValue(d *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("ui: json: nested deeper than %d levels", maxDepth)
	}
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			o := object{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				o = append(o, member{Key: k.(string), Value: v})
			}
			_, err := d.Token()
			return o, err
		case '[':
			a := []any{}
			for d.More() {
				v, err := decodeValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := d.Token()
			return a, err
		}
		return nil, fmt.Errorf("ui: json: unexpected %v", tok)
	default:
		return tok, nil
	}
}

// scalarText is how a scalar is shown in an input: a string as it is,
// anything else as JSON.
func scalarText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

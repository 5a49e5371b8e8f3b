package ecsfake

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The encoder writes the SDK's output structs the way ECS puts them on the
// wire. encoding/json cannot: it would write Go field names, RFC 3339 times
// and the SDK's ResultMetadata. ECS member names are the Go field names with
// the first letter lowered (ServiceArn→serviceArn, EnableECSManagedTags→
// enableECSManagedTags), timestamps are epoch seconds with a fraction, and
// absent members are left out.

var timeType = reflect.TypeFor[time.Time]()

// encodeJSON renders v, an SDK output struct or a pointer to one.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeValue(&b, reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// wireName is the JSON key ECS uses for a Go field name.
func wireName(field string) string {
	if field == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(field)
	return string(unicode.ToLower(r)) + field[n:]
}

func encodeValue(b *bytes.Buffer, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("null")
			return nil
		}
		if v.Kind() == reflect.Interface {
			return encodeUnion(b, v.Elem())
		}
		return encodeValue(b, v.Elem())
	case reflect.Struct:
		if v.Type() == timeType {
			writeEpoch(b, v.Interface().(time.Time))
			return nil
		}
		return encodeStruct(b, v)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return writeString(b, base64.StdEncoding.EncodeToString(v.Bytes()))
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeValue(b, v.Index(i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case reflect.Map:
		return encodeMap(b, v)
	case reflect.String:
		return writeString(b, v.String())
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
		return nil
	case reflect.Float32, reflect.Float64:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
		return nil
	default:
		return fmt.Errorf("ecsfake: encode: unsupported kind %s (%s)", v.Kind(), v.Type())
	}
}

func encodeStruct(b *bytes.Buffer, v reflect.Value) error {
	b.WriteByte('{')
	first := true
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "ResultMetadata" {
			continue
		}
		fv := v.Field(i)
		if omit(fv) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := writeString(b, wireName(f.Name)); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encodeValue(b, fv); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
	}
	b.WriteByte('}')
	return nil
}

// omit reports whether a member is absent. Non-pointer numbers and booleans
// are always present (ECS sends runningCount 0), but an empty enum is not a
// value ECS would send.
func omit(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Map:
		return v.IsNil()
	case reflect.String:
		return v.Len() == 0
	default:
		return false
	}
}

// encodeUnion writes a smithy union, which the SDK models as an interface
// implemented by one struct per member: *types.XMemberY{Value: v} is
// {"y": v} on the wire.
func encodeUnion(b *bytes.Buffer, v reflect.Value) error {
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
		v = v.Elem()
	}
	_, member, ok := strings.Cut(t.Name(), "Member")
	if !ok || t.Kind() != reflect.Struct {
		return fmt.Errorf("ecsfake: encode: %s is not a union member", t)
	}
	value := v.FieldByName("Value")
	if !value.IsValid() {
		return fmt.Errorf("ecsfake: encode: union member %s has no Value", t)
	}
	b.WriteByte('{')
	if err := writeString(b, wireName(member)); err != nil {
		return err
	}
	b.WriteByte(':')
	if err := encodeValue(b, value); err != nil {
		return err
	}
	b.WriteByte('}')
	return nil
}

func encodeMap(b *bytes.Buffer, v reflect.Value) error {
	if v.Type().Key().Kind() != reflect.String {
		return fmt.Errorf("ecsfake: encode: map key %s is not a string", v.Type().Key())
	}
	keys := v.MapKeys()
	// Sorted so the same state always encodes to the same bytes.
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeString(b, k.String()); err != nil {
			return err
		}
		b.WriteByte(':')
		if err := encodeValue(b, v.MapIndex(k)); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func writeString(b *bytes.Buffer, s string) error {
	q, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("ecsfake: encode string: %w", err)
	}
	b.Write(q)
	return nil
}

// writeEpoch writes t as ECS does, seconds since the epoch with millisecond
// fractions, in decimal so no binary rounding creeps in.
func writeEpoch(b *bytes.Buffer, t time.Time) {
	ms := t.UnixMilli()
	sec, frac := ms/1000, ms%1000
	if frac < 0 {
		sec, frac = sec-1, frac+1000
	}
	fmt.Fprintf(b, "%d.%03d", sec, frac)
}

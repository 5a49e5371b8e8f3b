// Package jsonrow reads a row a database wrote as a JSON array of its
// columns (SQLite's json_array, PostgreSQL's jsonb_build_array) through the
// same Scan a query's row offers: the outbox keeps a tenant's row so, and
// the stores read it back with the scan they read tenants with.
package jsonrow

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// Row is one row as a JSON array of its columns.
type Row []json.RawMessage

// Parse reads a row written as a JSON array.
func Parse(text []byte) (Row, error) {
	var r Row
	if err := json.Unmarshal(text, &r); err != nil {
		return nil, fmt.Errorf("jsonrow: %w", err)
	}
	return r, nil
}

var null = []byte("null")

// Scan copies the columns into dest, as a database row's Scan does: a
// JSON string into a string or a []byte (its text), anything else into a
// []byte as its JSON (nil for null), a number into integers, a number or
// a boolean into a bool, null into a nil pointer or an invalid sql.Null*,
// and whatever else into dest by encoding/json.
func (r Row) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("jsonrow: %d columns, %d destinations", len(r), len(dest))
	}
	for i, d := range dest {
		if err := scan(r[i], d); err != nil {
			return fmt.Errorf("jsonrow: column %d: %w", i, err)
		}
	}
	return nil
}

func scan(raw json.RawMessage, dest any) error {
	isNull := bytes.Equal(raw, null)
	switch d := dest.(type) {
	case *[]byte:
		switch {
		case isNull:
			*d = nil
		case len(raw) > 0 && raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			*d = []byte(s)
		default:
			*d = append([]byte(nil), raw...)
		}
		return nil
	case *bool:
		if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			var n int64
			if err := json.Unmarshal(raw, &n); err != nil {
				return err
			}
			*d = n != 0
			return nil
		}
		return json.Unmarshal(raw, d)
	case *sql.NullString:
		if isNull {
			*d = sql.NullString{}
			return nil
		}
		d.Valid = true
		return json.Unmarshal(raw, &d.String)
	case *sql.NullInt64:
		if isNull {
			*d = sql.NullInt64{}
			return nil
		}
		d.Valid = true
		return json.Unmarshal(raw, &d.Int64)
	case **time.Time:
		if isNull {
			*d = nil
			return nil
		}
		var t time.Time
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		*d = &t
		return nil
	case **string:
		if isNull {
			*d = nil
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		*d = &s
		return nil
	case **int64:
		if isNull {
			*d = nil
			return nil
		}
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return err
		}
		*d = &n
		return nil
	}
	if isNull {
		return fmt.Errorf("null cannot be read into %T", dest)
	}
	return json.Unmarshal(raw, dest)
}

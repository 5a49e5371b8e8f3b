package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// JSONObjectType is the type of an attribute that holds a JSON object as a
// string (a compute_config, a plan version's config): values that are the
// same JSON, whatever their key order, spacing or number spelling, are
// equal to Terraform, so landlord's re-encoding shows no diff.
type JSONObjectType struct {
	basetypes.StringType
}

var _ basetypes.StringTypable = JSONObjectType{}

// String describes the type in messages.
func (t JSONObjectType) String() string { return "provider.JSONObjectType" }

// ValueType returns the type's value.
func (t JSONObjectType) ValueType(context.Context) attr.Value { return JSONObject{} }

// Equal reports whether o is this type.
func (t JSONObjectType) Equal(o attr.Type) bool {
	other, ok := o.(JSONObjectType)
	return ok && t.StringType.Equal(other.StringType)
}

// ValueFromString wraps a string value.
func (t JSONObjectType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return JSONObject{StringValue: in}, nil
}

// ValueFromTerraform converts Terraform's value.
func (t JSONObjectType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return JSONObject{StringValue: s}, nil
}

// JSONObject is a value of JSONObjectType.
type JSONObject struct {
	basetypes.StringValue
}

var (
	_ basetypes.StringValuableWithSemanticEquals = JSONObject{}
	_ xattr.ValidateableAttribute                = JSONObject{}
)

// NewJSONObject returns a known value holding s.
func NewJSONObject(s string) JSONObject { return JSONObject{StringValue: basetypes.NewStringValue(s)} }

// NullJSONObject returns a null value.
func NullJSONObject() JSONObject { return JSONObject{StringValue: basetypes.NewStringNull()} }

// Type returns the value's type.
func (v JSONObject) Type(context.Context) attr.Type { return JSONObjectType{} }

// Equal reports whether o is the same value, as Terraform compares: byte
// for byte. StringSemanticEquals compares as JSON.
func (v JSONObject) Equal(o attr.Value) bool {
	other, ok := o.(JSONObject)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals reports whether both values are the same JSON.
func (v JSONObject) StringSemanticEquals(_ context.Context, o basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	other, ok := o.(JSONObject)
	if !ok {
		diags.AddError("Semantic equality check error",
			fmt.Sprintf("a JSON object value was compared with a %T; this is a bug of the provider, please report it", o))
		return false, diags
	}
	a, errA := decodeJSON([]byte(v.ValueString()))
	b, errB := decodeJSON([]byte(other.ValueString()))
	if errA != nil || errB != nil {
		return false, nil // validation reports what is not JSON
	}
	return jsonEqual(a, b), nil
}

// ValidateAttribute refuses a value that is not a JSON object.
func (v JSONObject) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	if _, err := decodeObject([]byte(v.ValueString())); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid JSON object",
			fmt.Sprintf("The value is %v: give a JSON object, for example with jsonencode({ image = \"example.com/app:1\" }).", err))
	}
}

// object decodes the value; it is known and valid (ValidateAttribute ran).
func (v JSONObject) object() (map[string]any, error) { return decodeObject([]byte(v.ValueString())) }

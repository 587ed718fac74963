// Package decodeerr lets a stored object that does not decode be read as its metadata and a message, rather
// than fail the whole list it arrives in. The API server keeps what it accepted before the CRDs' validation
// rules existed (a string such as "1e1.5" where a quantity belongs: the old pattern let it through); decoded
// strictly, one such object makes every list of its kind fail, and every object of that kind stops being
// served. The API types' UnmarshalJSON decode through Decode instead.
package decodeerr

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

// Reason is the ConfigUnsupported reason the controllers give an object that does not decode.
const Reason = "InvalidObject"

// Unmarshal is an API type's UnmarshalJSON: it decodes data into a new P (the type's plain twin, without the
// method) and hands it to keep; when the object does not decode but its metadata does, it hands the metadata
// and the message to undecodable instead, and returns no error.
func Unmarshal[P any](data []byte, keep func(*P), undecodable func(metav1.TypeMeta, metav1.ObjectMeta, string)) error {
	var p P
	tm, om, msg, err := Decode(data, &p)
	switch {
	case err != nil:
		return err
	case msg != "":
		undecodable(tm, om, msg)
	default:
		keep(&p)
	}
	return nil
}

// Decode decodes data into obj (a pointer to a struct without an UnmarshalJSON method), as the API
// machinery does (case-sensitive, integers kept). When that fails but the object's metadata decodes, it
// returns the metadata and a message naming the field that failed and the fix, and no error; when even the
// metadata does not decode, the error.
func Decode(data []byte, obj any) (metav1.TypeMeta, metav1.ObjectMeta, string, error) {
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, obj)
	if err == nil {
		return metav1.TypeMeta{}, metav1.ObjectMeta{}, "", nil
	}
	var meta struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
	}
	if merr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &meta); merr != nil || meta.Metadata.Name == "" {
		return metav1.TypeMeta{}, metav1.ObjectMeta{}, "", err
	}
	return meta.TypeMeta, meta.Metadata, describe(data, reflect.TypeOf(obj), err), nil
}

// describe names the first quantity that does not parse, else gives the decoder's error.
func describe(data []byte, t reflect.Type, err error) string {
	var raw any
	what := err.Error()
	if sigsjson.UnmarshalCaseSensitivePreserveInts(data, &raw) == nil {
		if bad := badQuantity(t, raw, ""); bad != "" {
			what = bad + " is not a quantity (e.g. 250m, 2, 512Mi)"
		}
	}
	return "cannot read the stored object: " + what + "; hvpa ignores this object until it is edited to fix the field " +
		"(the API server refuses such values now; this one was stored before the CRD's validation rules)"
}

var quantityType = reflect.TypeOf(resource.Quantity{})

// badQuantity walks the JSON value v along the Go type t and returns `path: "value"` for the first
// quantity that does not parse, or "".
func badQuantity(t reflect.Type, v any, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == quantityType {
		s := fmt.Sprint(v)
		if _, err := resource.ParseQuantity(s); err != nil {
			return fmt.Sprintf("%s: %q", strings.TrimPrefix(path, "."), s)
		}
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		if m, ok := v.(map[string]any); ok {
			return badQuantityInStruct(t, m, path)
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			keys := slices.Sorted(maps.Keys(m))
			for _, k := range keys {
				if bad := badQuantity(t.Elem(), m[k], path+"."+k); bad != "" {
					return bad
				}
			}
		}
	case reflect.Slice, reflect.Array:
		a, _ := v.([]any)
		for i, sub := range a {
			if bad := badQuantity(t.Elem(), sub, fmt.Sprintf("%s[%d]", path, i)); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// badQuantityInStruct is badQuantity for the JSON object m of struct type t: its fields by their JSON names,
// inline (embedded) ones at the same path.
func badQuantityInStruct(t reflect.Type, m map[string]any, path string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || (!f.IsExported() && !f.Anonymous):
			continue
		case name == "" && f.Anonymous: // inline
			if bad := badQuantity(f.Type, m, path); bad != "" {
				return bad
			}
			continue
		case name == "":
			name = f.Name
		}
		if sub, ok := m[name]; ok {
			if bad := badQuantity(f.Type, sub, path+"."+name); bad != "" {
				return bad
			}
		}
	}
	return ""
}

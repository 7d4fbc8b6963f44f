package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/secret"
)

// A ToolFactory makes tools from the params a config file gives them, so
// one Go binary can serve several configured tools of one kind:
//
//	tools:
//	  - name: search_news             # the tool's name, as the model sees it
//	    use: serper                   # the factory, registered in Loader.Factories
//	    params: {api_key: "${SERPER_API_KEY}", type: news}
//	  - name: search_web
//	    use: serper
//	    params: {api_key: "${SERPER_API_KEY}"}
//
// Make one with Factory. The params are decoded as strictly as the rest
// of the file, into the factory's Go type: an unknown key, a value of the
// wrong type or an unset ${VAR} is an *Error with the file, line and
// column. Only fields tagged config:"credential" may read any environment
// variable (see "Variables" in the package doc); others read those the
// program allows.
type ToolFactory interface {
	// paramsType is the Go type params decode into.
	paramsType() reflect.Type
	// newTool makes the tool named name from params, a value of
	// paramsType.
	newTool(name string, params any) (runlet.Tool, error)
}

// Factory returns a ToolFactory that decodes a tool's params into a P and
// calls newTool with the tool's name and them. P is usually a struct whose
// fields name the keys by their yaml tag (else their json tag, else the
// field's name in lower case); fields tagged config:"credential" may read
// any environment variable and are masked when the config is printed:
//
//	type SerperParams struct {
//		APIKey string `yaml:"api_key" config:"credential"`
//		Type   string `yaml:"type"` // search, news or images
//	}
//
//	loader.Factories = map[string]config.ToolFactory{
//		"serper": config.Factory(func(name string, p SerperParams) (runlet.Tool, error) {
//			return newSerper(name, p)
//		}),
//	}
//
// A tool without params gets P's zero value. An error from newTool is a
// config error positioned at the tool's entry; the tool it returns must be
// named name.
func Factory[P any](newTool func(name string, params P) (runlet.Tool, error)) ToolFactory {
	return factory[P](newTool)
}

type factory[P any] func(name string, params P) (runlet.Tool, error)

func (factory[P]) paramsType() reflect.Type { return reflect.TypeFor[P]() }

func (f factory[P]) newTool(name string, params any) (runlet.Tool, error) {
	p, _ := params.(P) // nil (no params) is P's zero value
	return f(name, p)
}

// buildTool makes the tool of a tools entry with use:.
func buildTool(fac ToolFactory, ref ToolRef) (runlet.Tool, error) {
	params := ref.Params
	if params == nil {
		params = reflect.Zero(fac.paramsType()).Interface()
	}
	t, err := fac.newTool(ref.Name, params)
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("factory %q made no tool", ref.Use)
	}
	if got := t.Spec().Name; got != ref.Name {
		return nil, fmt.Errorf("factory %q made a tool named %q, not %q as configured; a factory must name its tool with the name it is given", ref.Use, got, ref.Name)
	}
	return t, nil
}

// Printing a ToolRef masks its params' credential fields, as File, Model
// and MCPServer mask theirs.
type plainToolRef ToolRef

func (r ToolRef) masked() ToolRef {
	if r.Params != nil {
		r.Params = maskCredentials(reflect.ValueOf(r.Params)).Interface()
	}
	return r
}

// Format prints r with its params' credentials masked, for every verb.
func (r ToolRef) Format(s fmt.State, verb rune) {
	secret.Format(s, verb, "config.ToolRef", plainToolRef(r.masked()))
}

// LogValue is r with its params' credentials masked.
func (r ToolRef) LogValue() slog.Value { return slog.AnyValue(plainToolRef(r.masked())) }

// MarshalJSON encodes r with its params' credentials masked.
func (r ToolRef) MarshalJSON() ([]byte, error) { return json.Marshal(plainToolRef(r.masked())) }

// maskCredentials returns a copy of v in which every field tagged
// config:"credential", in v or in a struct, pointer, slice or map inside
// it, is masked: a string as secret.String, a map of strings as
// secret.Values, anything else as its zero value.
func maskCredentials(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(maskCredentials(v.Elem()))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(maskCredentials(v.Elem()))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Tag.Get("config") == "credential" {
				out.Field(i).Set(maskValue(v.Field(i)))
			} else {
				out.Field(i).Set(maskCredentials(v.Field(i)))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(maskCredentials(v.Index(i)))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), maskCredentials(it.Value()))
		}
		return out
	}
	return v
}

// maskValue is the masked form of a credential field's value.
func maskValue(v reflect.Value) reflect.Value {
	out := reflect.New(v.Type()).Elem()
	switch {
	case v.Kind() == reflect.String:
		out.SetString(secret.String(v.String()))
	case v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String && v.Type().Elem().Kind() == reflect.String:
		for it := v.MapRange(); it.Next(); {
			if out.IsNil() {
				out.Set(reflect.MakeMapWithSize(v.Type(), v.Len()))
			}
			val := reflect.New(v.Type().Elem()).Elem()
			val.SetString(secret.String(it.Value().String()))
			out.SetMapIndex(it.Key(), val)
		}
	}
	return out
}

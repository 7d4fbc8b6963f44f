package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/suggest"
	"go.yaml.in/yaml/v3"
)

// ToolRef names a tool. In YAML it is the name alone, or a mapping with a
// per-tool policy, or a tool a factory makes from params (see ToolFactory):
//
//	tools:
//	  - current_time
//	  - name: delete_file
//	    timeout: 10s
//	    require_approval: true
//	  - name: search_news
//	    use: serper
//	    params: {api_key: "${SERPER_API_KEY}", type: news}
type ToolRef struct {
	// Name is the tool's name: a tool of the Loader's Tools or a built-in,
	// or, with Use, the name of the tool the factory makes (default: Use).
	Name string `yaml:"name"`
	// Use names a factory of Loader.Factories that makes the tool.
	Use string `yaml:"use"`
	// Params is what the file's params: decoded into: a value of the
	// factory's params type, or nil when the file has none (the factory
	// then gets its zero value). Printing masks its credential fields.
	Params          any           `yaml:"-"`
	Timeout         time.Duration `yaml:"timeout"`
	RequireApproval bool          `yaml:"require_approval"`
}

// Registry holds the tools a config may name, by name. The name should be
// the tool's Spec().Name; Tools builds such a registry.
type Registry map[string]runlet.Tool

// Tools returns a Registry of tools keyed by their Spec().Name.
func Tools(tools ...runlet.Tool) Registry {
	r := make(Registry, len(tools))
	for _, t := range tools {
		r[t.Spec().Name] = t
	}
	return r
}

// resolveTools finds the tools f names, in the Loader's Tools and the
// built-ins, or their factories; a tool or factory unknown or a name
// listed twice is an error, but not one whose entry is in bad. With build,
// it makes the tools of factories too; without, it returns no tools.
func (l *Loader) resolveTools(f *File, bad fieldSet, build bool) ([]runlet.Tool, []error) {
	var errs []error
	var tools []runlet.Tool
	seen := map[string]bool{}
	for i, ref := range f.Tools {
		field := "tools." + strconv.Itoa(i)
		if bad.under(field) {
			continue
		}
		var t runlet.Tool
		if ref.Use != "" {
			fac, ok := l.Factories[ref.Use]
			if !ok {
				avail := slices.Collect(maps.Keys(l.Factories))
				errs = append(errs, f.errAt(field+".use", ref.Use, "unknown tool factory %q%s (registered: %s)", ref.Use, suggest.Hint(ref.Use, avail), list(avail)))
				continue
			}
			if build {
				var err error
				if t, err = buildTool(fac, ref); err != nil {
					errs = append(errs, f.errAt(field, ref.Name, "tool %q (use: %s): %v", ref.Name, ref.Use, err))
					continue
				}
			}
		} else {
			var ok bool
			if t, ok = l.Tools[ref.Name]; !ok {
				t, ok = builtins[ref.Name]
			}
			if !ok {
				avail := slices.Collect(maps.Keys(l.Tools))
				for name := range builtins {
					if !slices.Contains(avail, name) {
						avail = append(avail, name)
					}
				}
				hint := ""
				if _, isFactory := l.Factories[ref.Name]; isFactory {
					hint = fmt.Sprintf("; %q is a tool factory: write use: %s, with a name for the tool", ref.Name, ref.Name)
				}
				errs = append(errs, f.errAt(field, ref.Name, "unknown tool %q%s (available: %s)%s", ref.Name, suggest.Hint(ref.Name, avail), list(avail), hint))
				continue
			}
		}
		if seen[ref.Name] {
			errs = append(errs, f.errAt(field, ref.Name, "tool %q is listed twice", ref.Name))
			continue
		}
		seen[ref.Name] = true
		if !build {
			continue
		}
		if ref.Timeout > 0 || ref.RequireApproval {
			t = withPolicy(t, ref)
		}
		tools = append(tools, t)
	}
	return tools, errs
}

// decodeToolRef accepts a tool name, or {name, use, params, timeout,
// require_approval}; params decode into the type of use's factory.
func (d *decoder) decodeToolRef(n *yaml.Node, v reflect.Value, field string) {
	if n.Kind == yaml.MappingNode {
		rest, params := splitKey(n, "params")
		d.decodeStruct(rest, v, field)
		ref := v.Addr().Interface().(*ToolRef)
		if ref.Name == "" && ref.Use != "" {
			ref.Name = ref.Use
		}
		if ref.Name == "" {
			d.errorf(n, field, "a tool needs a name (name: current_time)")
		}
		if params != nil {
			d.decodeParams(params, ref, field+".params")
		}
		return
	}
	s, ok := d.scalar(n, &path{key: field}, "a tool name, or a mapping with name, timeout and require_approval")
	if ok && s.Value == "" {
		d.errorf(n, field, "empty tool name")
		return
	}
	if ok {
		v.FieldByName("Name").SetString(s.Value)
	}
}

// splitKey returns the mapping n without key, and key's key and value
// nodes (nil when n has no such key).
func splitKey(n *yaml.Node, key string) (rest *yaml.Node, kv []*yaml.Node) {
	c := *n
	c.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key && kv == nil {
			kv = n.Content[i : i+2]
			continue
		}
		c.Content = append(c.Content, n.Content[i], n.Content[i+1])
	}
	return &c, kv
}

// decodeParams decodes a tool's params (kv: the key and value nodes) into
// the params type of the tool's factory.
func (d *decoder) decodeParams(kv []*yaml.Node, ref *ToolRef, field string) {
	if ref.Use == "" {
		d.errorf(kv[0], field, "params go with use: the tool factory that takes them (use: FACTORY)")
		return
	}
	fac, ok := d.factories[ref.Use]
	if !ok {
		return // resolveTools reports the unknown factory
	}
	p := reflect.New(fac.paramsType()).Elem()
	errs := len(d.errs)
	d.decode(kv[1], p, field)
	if len(d.errs) == errs {
		ref.Params = p.Interface()
	}
}

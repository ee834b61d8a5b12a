package lloom

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
)

// Redaction marks a value removed at an output boundary.
const Redaction = "[redacted]"

// Redacted returns a deep copy of the config that is safe to print or
// write: every backend baseUrl, apiKey and healthUrl, every node endpoint
// and proxy baseUrl, every runtime healthUrl, and every environment value
// or launch argument whose name looks secret (it contains KEY, TOKEN,
// SECRET, PASSWORD, PASSWD, CREDENTIAL or AUTH) become "[redacted]", and
// URLs inside the other launch strings are replaced too. Names of
// environment variables (apiKeyEnv) stay, and `${ENV}` placeholders are
// never expanded. The receiver is not changed.
func (c *Config) Redacted() *Config {
	if c == nil {
		return nil
	}
	out := deepCopy(c)
	for id, b := range out.Backends {
		b.BaseURL = redactString(b.BaseURL)
		b.APIKey = redactString(b.APIKey)
		b.HealthURL = redactString(b.HealthURL)
		out.Backends[id] = b
	}
	for id, n := range out.Cluster.Nodes {
		n.Endpoint = redactString(n.Endpoint)
		if n.Proxy != nil {
			n.Proxy.BaseURL = redactString(n.Proxy.BaseURL)
		}
		out.Cluster.Nodes[id] = n
	}
	for id, rt := range out.Runtimes {
		rt.HealthURL = redactString(rt.HealthURL)
		rt.Env = redactEnv(rt.Env)
		rt.Args = redactArgs(rt.Args)
		rt.Command = scrubURLs(rt.Command)
		if rt.Bootstrap != nil {
			rt.Bootstrap.CreateArgs = redactArgs(rt.Bootstrap.CreateArgs)
			rt.Bootstrap.Command = redactArgs(rt.Bootstrap.Command)
		}
		out.Runtimes[id] = rt
	}
	return out
}

// Redacted returns a deep copy of the node status without backend URLs:
// every runtime row's healthUrl becomes "[redacted]" and URLs inside the
// node's error text are removed. The embedded models carry no URL or key.
// Inventory is left as it is; package inventory owns its shape.
func (n *NodeStatus) Redacted() *NodeStatus {
	if n == nil {
		return nil
	}
	out := deepCopy(n)
	out.redact()
	return out
}

func (n *NodeStatus) redact() {
	n.Error = Message(scrubURLs(string(n.Error)))
	for id, row := range n.RuntimeManager.Runtimes {
		row.HealthURL = redactString(row.HealthURL)
		n.RuntimeManager.Runtimes[id] = row
	}
}

// Redacted returns a deep copy with every node redacted as
// NodeStatus.Redacted does.
func (c *ClusterStatus) Redacted() *ClusterStatus {
	if c == nil {
		return nil
	}
	out := deepCopy(c)
	for id, n := range out.Nodes {
		n.redact()
		out.Nodes[id] = n
	}
	return out
}

// Redactor is a document that can drop its secrets: *Config, *NodeStatus
// and *ClusterStatus.
type Redactor interface {
	redacted() any
}

func (c *Config) redacted() any        { return c.Redacted() }
func (n *NodeStatus) redacted() any    { return n.Redacted() }
func (c *ClusterStatus) redacted() any { return c.Redacted() }

// MarshalRedacted writes the redacted copy of v as indented JSON.
func MarshalRedacted(v Redactor) ([]byte, error) {
	return json.MarshalIndent(v.redacted(), "", "  ")
}

func redactString(s string) string {
	if s == "" {
		return ""
	}
	return Redaction
}

var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}

// secretName reports whether an environment variable or flag name looks
// like it carries a credential. It errs towards redacting.
func secretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

func redactEnv(env map[string]string) map[string]string {
	for k, v := range env {
		if secretName(k) {
			env[k] = redactString(v)
		} else {
			env[k] = scrubURLs(v)
		}
	}
	return env
}

// redactArgs redacts the values of secret-looking flags ("--api-key X",
// "--api-key=X") and of secret-looking NAME=value items (Docker "-e"
// arguments), and removes credentials embedded in URLs.
func redactArgs(args []string) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			name, val, inline := strings.Cut(a, "=")
			if !secretName(name) {
				// "--env=NAME=secret"
				if k, _, ok := strings.Cut(val, "="); inline && ok && secretName(k) {
					args[i] = name + "=" + k + "=" + Redaction
				} else {
					args[i] = scrubURLs(a)
				}
				continue
			}
			if inline {
				args[i] = name + "=" + Redaction
			} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				args[i+1] = Redaction
				i++
			}
			continue
		}
		if k, _, ok := strings.Cut(a, "="); ok && secretName(k) {
			args[i] = k + "=" + Redaction
			continue
		}
		args[i] = scrubURLs(a)
	}
	return args
}

var urlRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+`)

// scrubURLs replaces every URL in s.
func scrubURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlRE.ReplaceAllString(s, Redaction)
}

// deepCopy copies v and everything it points to, so the copy can be
// changed without touching v.
func deepCopy[T any](v T) T {
	return copyValue(reflect.ValueOf(&v).Elem()).Interface().(T)
}

func copyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(copyValue(v.Elem()))
		return n
	case reflect.Slice:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(copyValue(v.Index(i)))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			n.SetMapIndex(it.Key(), copyValue(it.Value()))
		}
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		for i := range v.NumField() {
			if n.Field(i).CanSet() {
				n.Field(i).Set(copyValue(v.Field(i)))
			}
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return reflect.Zero(v.Type())
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(copyValue(v.Elem()))
		return n
	}
	return v
}

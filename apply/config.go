package apply

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/fleet"
)

// A config change is made on the file's own JSON, members kept in their
// order and every field poolsolve does not model kept as written: LLooM
// reads fields poolsolve never decodes.

// jnode is a JSON value with its object members in order.
type jnode struct {
	keys []string
	vals []*jnode // object members, or array elements
	arr  bool
	obj  bool
	raw  json.RawMessage // a scalar, as written
}

func parseOrdered(data []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the top-level value")
	}
	return n, nil
}

func decodeNode(dec *json.Decoder) (*jnode, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		n := &jnode{obj: t == '{', arr: t == '['}
		for dec.More() {
			if n.obj {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				n.keys = append(n.keys, key)
			}
			v, err := decodeNode(dec)
			if err != nil {
				return nil, err
			}
			n.vals = append(n.vals, v)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		return n, nil
	case json.Number:
		return &jnode{raw: json.RawMessage(t.String())}, nil
	default:
		b, err := json.Marshal(t)
		return &jnode{raw: b}, err
	}
}

func (n *jnode) get(key string) *jnode {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func (n *jnode) set(key string, v *jnode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

func (n *jnode) del(key string) {
	for i, k := range n.keys {
		if k == key {
			n.keys = append(n.keys[:i], n.keys[i+1:]...)
			n.vals = append(n.vals[:i], n.vals[i+1:]...)
			return
		}
	}
}

func scalar(v any) *jnode {
	b, _ := json.Marshal(v)
	return &jnode{raw: b}
}

func (n *jnode) write(b *bytes.Buffer, indent string) {
	switch {
	case n.obj || n.arr:
		open, end := byte('{'), byte('}')
		if n.arr {
			open, end = '[', ']'
		}
		b.WriteByte(open)
		if len(n.vals) == 0 {
			b.WriteByte(end)
			return
		}
		inner := indent + "  "
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n" + inner)
			if n.obj {
				k, _ := json.Marshal(n.keys[i])
				b.Write(k)
				b.WriteString(": ")
			}
			v.write(b, inner)
		}
		b.WriteString("\n" + indent)
		b.WriteByte(end)
	default:
		b.Write(n.raw)
	}
}

// ConfigChange is one change to the config file, in the form LLooM 0.2.3
// reads: an alias's `target` (its `fallbacks` kept), or a runtime's
// `keepWarm`.
type ConfigChange struct {
	Alias  string // re-route: aliases.<Alias>.target = Target
	Target string
	// Runtime's keepWarm becomes KeepWarm.
	Runtime  string
	KeepWarm bool
}

// Key is the change as a config path and value, for messages and the
// manual step of a node whose config was not written.
func (c ConfigChange) Key() string {
	if c.Alias != "" {
		return fmt.Sprintf("aliases.%s.target = %q", c.Alias, c.Target)
	}
	if c.KeepWarm {
		return fmt.Sprintf("runtimes.%s.keepWarm = true", c.Runtime)
	}
	return fmt.Sprintf("runtimes.%s.keepWarm removed", c.Runtime)
}

// editConfig applies c to the config document data.
func editConfig(data []byte, c ConfigChange) ([]byte, error) {
	for _, id := range []string{c.Alias, c.Target, c.Runtime} {
		if !utf8.ValidString(id) { // each alone: two halves can join into text
			return nil, fmt.Errorf("%q: an id that is not UTF-8 text", id)
		}
	}
	root, err := parseOrdered(data)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if !root.obj {
		return nil, errors.New("expected an object at the top")
	}
	switch {
	case c.Alias != "":
		aliases := root.get("aliases")
		if aliases == nil {
			aliases = &jnode{obj: true}
			root.set("aliases", aliases)
		}
		if !aliases.obj {
			return nil, errors.New("aliases: expected an object")
		}
		a := aliases.get(c.Alias)
		switch {
		case a == nil:
			aliases.set(c.Alias, &jnode{obj: true, keys: []string{"target"}, vals: []*jnode{scalar(c.Target)}})
		case a.obj && a.get("members") != nil:
			return nil, fmt.Errorf("aliases.%s: written in the members form, which LLooM 0.2.3 does not read; expected target and fallbacks", c.Alias)
		case a.obj:
			a.set("target", scalar(c.Target))
		case !a.arr && len(a.raw) > 0 && a.raw[0] == '"':
			aliases.set(c.Alias, scalar(c.Target)) // a bare id stays one
		default:
			return nil, fmt.Errorf("aliases.%s: expected an object with target, or a model id", c.Alias)
		}
	default:
		rts := root.get("runtimes")
		var rt *jnode
		if rts != nil && rts.obj {
			rt = rts.get(c.Runtime)
		}
		if rt == nil || !rt.obj {
			return nil, fmt.Errorf("runtimes.%s: no such runtime object in the config", c.Runtime)
		}
		if ev := rt.get("evictable"); ev != nil && !c.KeepWarm {
			rt.del("evictable") // the legacy spelling of keepWarm
		}
		if c.KeepWarm {
			rt.set("keepWarm", scalar(true))
		} else {
			rt.del("keepWarm")
		}
	}
	var b bytes.Buffer
	root.write(&b, "")
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// writeConfig applies c to the file at path: the previous version is
// kept as path.bak-<UTC time>, and the new one replaces it atomically,
// so a gateway polling the file reads the old or the new, never a part.
// It returns the backup's path; nothing is written when nothing changes.
func writeConfig(path string, c ConfigChange, now time.Time) (backup string, changed bool, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	out, err := editConfig(data, c)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, data) {
		return "", false, nil
	}
	backup = fmt.Sprintf("%s.bak-%s", path, now.UTC().Format("20060102T150405.000Z"))
	if err := fleet.WriteFileAtomic(backup, data); err != nil {
		return "", false, fmt.Errorf("keep the previous config as %s: %w", filepath.Base(backup), err)
	}
	if err := fleet.WriteFileAtomic(path, out); err != nil {
		return backup, false, err
	}
	return backup, true, nil
}

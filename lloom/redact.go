package lloom

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/poolsolve/poolsolve/internal/deepcopy"
	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// Redaction marks a value removed at an output boundary.
const Redaction = "[redacted]"

// This file is poolsolve's one redaction pass. Every document read
// (config, statuses, inventories, recipes, metrics, benchmarks) goes
// through it before anything is printed, written or served: Redact on Go
// values, RedactJSON on JSON text, RedactText on free text. The rules are
// the same for all three, keyed by the JSON name a value sits under:
//
//   - a value under a secret-looking key (apiKey, token, password, auth,
//     cookie, ...; not the *Env names of variables) loses every string;
//   - a value under an address key (endpoint, baseUrl, healthUrl, any
//     *url) is removed whole;
//   - environment variables keep their values only when the name is one
//     poolsolve reads (allow-list): anything else may be a credential
//     under a name no list foresees (MYPAT);
//   - argument lists lose the values of secret-looking flags (--api-key
//     X, --api-key=X, --token, --bearer, --password), of -e/--env
//     NAME=VALUE unless NAME is allowed, and of secret-looking NAME=VALUE;
//   - every other string is free text: URLs, credentials before an
//     image's registry (user:key@ghcr.io/...), key-shaped tokens (sk-...,
//     hf_..., ghp_...), bearer tokens and secret-looking flags in a
//     command line are removed.
//
// Numbers and booleans are kept; ids stay as they are unless they carry
// one of the above.

// Redacted returns a deep copy of the config with its secrets removed
// (see Redact). The receiver is not changed.
func (c *Config) Redacted() *Config {
	if c == nil {
		return nil
	}
	return Redact(c)
}

// Redacted returns a deep copy of the node status with its secrets
// removed (see Redact); the inventory inside is redacted as JSON.
func (n *NodeStatus) Redacted() *NodeStatus {
	if n == nil {
		return nil
	}
	return Redact(n)
}

// Redacted returns a deep copy of the cluster status with every node
// redacted.
func (c *ClusterStatus) Redacted() *ClusterStatus {
	if c == nil {
		return nil
	}
	return Redact(c)
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

// Redact returns a deep copy of v, any Go value, with the rules above
// applied to every string in it; struct fields are known by their JSON
// names. v is not changed.
func Redact[T any](v T) T {
	c := deepCopy(v)
	redactValue(reflect.ValueOf(&c).Elem(), "", false)
	return c
}

// RedactInPlace applies Redact's rules to what v, a pointer, points to,
// where it is: for a large document nothing else refers to, whose copy
// would cost as much again. Redact(v) and RedactInPlace(v) leave the
// same values.
func RedactInPlace[T any](v *T) {
	if v != nil {
		redactValue(reflect.ValueOf(v).Elem(), "", false)
	}
}

// RedactJSON applies the rules to a JSON document and writes it back
// compact, keys sorted, numbers as written, without HTML escaping. It
// streams (jsonpos.Rewrite): a large answer costs about its own size. A
// key written twice is an error, as everywhere else.
func RedactJSON(data []byte) ([]byte, error) {
	out, err := jsonpos.Rewrite(data, jsonCtx{}, &jsonRules{keys: map[string]keyRules{}})
	var se *jsonpos.SyntaxError
	if errors.As(err, &se) {
		return nil, &InputError{Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	return out, err
}

// RedactJSONTo is RedactJSON writing to w as it goes (jsonpos.RewriteTo):
// the same bytes, without holding the redacted document. Nothing is
// written when data is refused.
func RedactJSONTo(w io.Writer, data []byte) error {
	err := jsonpos.RewriteTo(w, data, jsonCtx{}, &jsonRules{keys: map[string]keyRules{}})
	var se *jsonpos.SyntaxError
	if errors.As(err, &se) {
		return &InputError{Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	return err
}

// jsonCtx is where a JSON value sits, for the rules: the key it is under
// and whether a key above it looked secret.
type jsonCtx struct {
	key    string
	secret bool
}

// jsonRules are redactValue's rules for JSON, which has no Go types to
// tell an id-keyed map from an object: idMaps does. keys remembers what
// the rules make of each key (a long list repeats the same few), for one
// document.
type jsonRules struct {
	keys map[string]keyRules
}

// keyRules is what the rules make of a key: secretKey and addressKey.
type keyRules struct{ secret, address bool }

// maxKeyRules bounds jsonRules.keys: a document keyed by ids has as
// many keys as entries.
const maxKeyRules = 4096

func (r *jsonRules) key(k string) keyRules {
	kr, ok := r.keys[k]
	if !ok {
		kr = keyRules{secretKey(k), addressKey(k)}
		if len(r.keys) < maxKeyRules {
			r.keys[k] = kr
		}
	}
	return kr
}

func (r *jsonRules) Member(p jsonCtx, k string) jsonCtx {
	switch {
	case isEnvKey(p.key):
		return jsonCtx{k, p.secret || !safeEnv[k]}
	case idMaps[p.key]:
		return jsonCtx{"", p.secret}
	}
	return jsonCtx{k, p.secret || r.key(k).secret}
}

// String is redactString, with the key's rules from the cache.
func (r *jsonRules) String(c jsonCtx, s string) string {
	if s == "" || c.secret || publicKeys[c.key] || placeholder(s) {
		return redactString(s, c.key, c.secret)
	}
	if r.key(c.key).address {
		return Redaction
	}
	return RedactText(s)
}

func (r *jsonRules) Strings(c jsonCtx, ss []string) []string {
	return redactList(ss, c.key, c.secret)
}

var jsonNumberType = reflect.TypeFor[json.Number]()

// redactValue applies the rules to v in place; key is the JSON name v sits
// under, secret whether some key above it looked secret.
func redactValue(v reflect.Value, key string, secret bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			redactValue(v.Elem(), key, secret)
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		e := reflect.New(v.Elem().Type()).Elem()
		e.Set(v.Elem())
		redactValue(e, key, secret)
		v.Set(e)
	case reflect.String:
		if v.Type() != jsonNumberType && v.CanSet() {
			v.SetString(redactString(v.String(), key, secret))
		}
	case reflect.Slice, reflect.Array:
		if v.Type() == rawMessageType {
			redactRaw(v)
			return
		}
		if args, ok := stringList(v); ok {
			args = redactList(args, key, secret)
			for i, a := range args {
				e := v.Index(i)
				if e.Kind() == reflect.Interface {
					e.Set(reflect.ValueOf(a))
				} else {
					e.SetString(a)
				}
			}
			return
		}
		for i := range v.Len() {
			redactValue(v.Index(i), key, secret)
		}
	case reflect.Map:
		if v.IsNil() || v.Type().Key().Kind() != reflect.String {
			return
		}
		env, ids := isEnvKey(key), idMap(v, key)
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			switch {
			case env:
				redactValue(e, k, secret || !safeEnv[k])
			case ids:
				// An id is no field name: node "wrong-key" holds no key.
				redactValue(e, "", secret)
			default:
				redactValue(e, k, secret || secretKey(k))
			}
			v.SetMapIndex(it.Key(), e)
		}
	case reflect.Struct:
		for _, f := range redactFields(v.Type()) {
			fv := v.Field(f.index)
			if !fv.CanSet() {
				continue
			}
			if f.rest {
				// Unknown members: each is judged by its own key.
				redactValue(fv, key, secret || secretKey(key))
				continue
			}
			redactValue(fv, f.name, secret || f.secret)
		}
	}
}

// redactField is how redactValue reads a struct field: by its JSON
// name, or, for the field that holds a document's unknown members
// (lloom:"rest"), by the key the struct sits under.
type redactField struct {
	index  int
	name   string
	secret bool // secretKey(name)
	rest   bool
}

// redactFieldsOf caches redactFields by struct type: reading the tags
// of every field of every value was a fifth of redacting a 256-node
// bundle.
var redactFieldsOf sync.Map // reflect.Type -> []redactField

// redactFields lists the exported fields of struct type t that have a
// JSON name, in order.
func redactFields(t reflect.Type) []redactField {
	if fs, ok := redactFieldsOf.Load(t); ok {
		return fs.([]redactField)
	}
	var fs []redactField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case f.Tag.Get("lloom") == "rest":
			fs = append(fs, redactField{index: i, rest: true})
			continue
		case name == "":
			name = f.Name
		}
		fs = append(fs, redactField{index: i, name: name, secret: secretKey(name)})
	}
	redactFieldsOf.Store(t, fs)
	return fs
}

// redactRaw redacts JSON kept as written (an inventory inside a status).
// JSON that does not read is dropped: it cannot be checked.
func redactRaw(v reflect.Value) {
	if v.Len() == 0 || !v.CanSet() {
		return
	}
	out, err := RedactJSON(v.Bytes())
	if err != nil {
		out = nil
	}
	v.SetBytes(out)
}

// stringList returns v's elements when all of them are strings: an
// argument list, whatever its key.
func stringList(v reflect.Value) ([]string, bool) {
	n := v.Len()
	if n == 0 {
		return nil, false
	}
	out := make([]string, n)
	for i := range n {
		e := v.Index(i)
		if e.Kind() == reflect.Interface && !e.IsNil() {
			e = e.Elem()
		}
		if e.Kind() != reflect.String || e.Type() == jsonNumberType {
			return nil, false
		}
		out[i] = e.String()
	}
	return out, true
}

func redactString(s, key string, secret bool) string {
	switch {
	case s == "" || placeholder(s) && !secretKey(key):
		// ${NAME} names a variable, never expanded; under a secret key
		// it goes all the same.
		return s
	case secret:
		return Redaction
	case publicKeys[key]:
		return s
	case addressKey(key):
		return Redaction
	}
	return RedactText(s)
}

func redactList(args []string, key string, secret bool) []string {
	if secret {
		for i, a := range args {
			if a != "" {
				args[i] = Redaction
			}
		}
		return args
	}
	if publicKeys[key] {
		return args
	}
	if addressKey(key) {
		return redactList(args, key, true)
	}
	return redactArgs(args)
}

// publicKeys hold identifiers that are URLs by design (a machine
// profile's $schema and profile), not endpoints.
var publicKeys = map[string]bool{"$schema": true, "profile": true}

// addressKey reports whether a key names an endpoint or URL, whose value
// is removed whole, whether or not it parses as a URL.
func addressKey(k string) bool {
	l := strings.ToLower(k)
	return l == "endpoint" || strings.HasSuffix(l, "url") || strings.HasSuffix(l, "uri")
}

// idMaps are the JSON keys whose objects are keyed by ids (nodes,
// runtimes, ...) rather than by field names.
var idMaps = map[string]bool{
	"nodes": true, "runtimes": true, "backends": true, "aliases": true, "profiles": true, "routeProfiles": true,
	"resourcesByNode": true, "requiredByRuntime": true, "residency": true, "routes": true, "slo": true,
}

// idMap reports whether map v is keyed by ids: in Go, a map of structs;
// in JSON, an object under one of idMaps.
func idMap(v reflect.Value, key string) bool {
	t := v.Type().Elem()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || idMaps[key]
}

func isEnvKey(k string) bool {
	return k == "env" || k == "environment"
}

// safeEnv are the environment variables whose values poolsolve reads
// (InferFromLaunch) or that name devices; every other value is removed.
var safeEnv = map[string]bool{
	"CUTE_DSL_ARCH": true, "TORCH_CUDA_ARCH_LIST": true, "MAX_NUM_SEQS": true, "MAX_MODEL_LEN": true,
	"CUDA_VISIBLE_DEVICES": true, "NVIDIA_VISIBLE_DEVICES": true,
}

var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL",
	"AUTH", "COOKIE", "BEARER", "SESSION", "PRIVATE", "SIGNATURE"}

// secretName reports whether an environment variable, flag or key name
// looks like it carries a credential. It errs towards redacting: PAT
// (personal access token) counts at the end of a name or as a word.
func secretName(name string) bool {
	if len(name) > secretMemoMax {
		return secretNameOf(name)
	}
	if v, ok := secretMemo.Load(name); ok {
		return v.(bool)
	}
	v := secretNameOf(name)
	if secretMemoLen.Add(1) <= secretMemoEntries {
		secretMemo.Store(name, v)
	}
	return v
}

// secretMemo holds secretName's answers: the same few keys come back in
// every node's documents, and on 1024x4000 working them out again was a
// third of the time the redaction took. Long names, rare, are not kept,
// and it stops growing at secretMemoEntries, so that a long-running
// serve fed ever new keys holds a bounded table.
var (
	secretMemo    sync.Map
	secretMemoLen atomic.Int64
)

const (
	secretMemoMax     = 64
	secretMemoEntries = 1 << 14
)

func secretNameOf(name string) bool {
	up := strings.ToUpper(strings.TrimLeft(name, "-"))
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return strings.HasSuffix(up, "PAT") || strings.Contains(up, "PAT_") || strings.Contains(up, "_PAT")
}

// secretKey is secretName for JSON keys: names of environment variables
// (apiKeyEnv) are not credentials.
func secretKey(k string) bool {
	return secretName(k) && !strings.HasSuffix(strings.ToUpper(k), "ENV")
}

// redactArgs redacts an argument list in place: the values of
// secret-looking flags ("--api-key X", "--api-key=X"), of Docker's
// "-e NAME=VALUE" / "--env NAME=VALUE" unless NAME is allowed, and of
// secret-looking NAME=VALUE items; then every item as free text.
func redactArgs(args []string) []string {
	args = redactFlags(args)
	for i, a := range args {
		if a != Redaction {
			args[i] = redactAssignment(a)
		}
	}
	return args
}

// placeholder reports whether s is only a ${NAME} placeholder: the name
// of a variable, never expanded, is no secret.
func placeholder(s string) bool {
	name, ok := strings.CutPrefix(s, "${")
	name, ok2 := strings.CutSuffix(name, "}")
	return ok && ok2 && name != "" && strings.Trim(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == ""
}

// secretFlag is secretName for command-line flags, less the flags that
// name a variable or file (--api-key-env, --token-file) or switch
// authentication off (--insecure-no-auth): their next word is no secret.
func secretFlag(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range []string{"ENV", "FILE", "PATH"} {
		if strings.HasSuffix(up, s) {
			return false
		}
	}
	for _, s := range []string{"NO-", "NO_", "DISABLE", "INSECURE"} {
		if strings.Contains(up, s) {
			return false
		}
	}
	return secretName(name)
}

// redactEnvItem redacts a Docker NAME=VALUE unless NAME is allowed.
func redactEnvItem(a string) string {
	if k, v, ok := strings.Cut(a, "="); ok && !safeEnv[k] && !placeholder(v) {
		return k + "=" + Redaction
	}
	return a
}

// redactAssignment redacts NAME=VALUE when NAME looks secret, and the
// item as free text otherwise.
func redactAssignment(a string) string {
	k, v, ok := strings.Cut(a, "=")
	if ok && secretName(k) && !placeholder(v) {
		return k + "=" + Redaction
	}
	return RedactText(a)
}

var (
	urlRE = regexp.MustCompile(`[A-Za-z0-9+.-]*://[^\s"'<>]*`)
	// credentials before a registry host: user:key@ghcr.io/org/image
	userinfoRE = regexp.MustCompile(`(^|[\s"'=(])[^\s/@"'=(]+@((?:localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)(?::[0-9]+)?/)`)
	tokenRE    = regexp.MustCompile(`(^|[^A-Za-z0-9_-])(?:sk-|sk_|hf_|ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|xox[abprs]-|AKIA)[A-Za-z0-9_-]{6,}`)
	bearerRE   = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}`)
	tokenHints = []string{"sk-", "sk_", "hf_", "gh", "glpat-", "xox", "AKIA"}
)

// RedactText removes what looks like a secret from free text: URLs,
// credentials before an image's registry, key-shaped tokens, bearer
// tokens, and the values of secret-looking flags in a command line. It is
// what every string not covered by a more specific rule goes through,
// and what error texts go through before they are printed.
func RedactText(s string) string {
	if strings.Contains(s, "://") {
		s = urlRE.ReplaceAllString(s, Redaction)
	}
	if strings.Contains(s, "@") {
		s = userinfoRE.ReplaceAllString(s, "${1}"+Redaction+"@${2}")
	}
	for _, h := range tokenHints {
		if strings.Contains(s, h) {
			s = tokenRE.ReplaceAllString(s, "${1}"+Redaction)
			break
		}
	}
	// bearerRE needs white space (\s) after the word.
	if strings.ContainsAny(s, " \t\n\f\r") && bearerRE.MatchString(s) {
		s = bearerRE.ReplaceAllString(s, "${1} "+Redaction)
	}
	if strings.HasPrefix(s, "-") || strings.Contains(s, " -") || strings.Contains(s, "\t-") {
		s = redactCommandLine(s)
	}
	return s
}

// redactCommandLine applies the flag rules to the words of a command
// line, keeping the spaces between them.
func redactCommandLine(s string) string {
	type word struct{ start, end int }
	var words []word
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' {
			j++
		}
		if j > i {
			words = append(words, word{i, j})
		}
		i = j
	}
	args := make([]string, len(words))
	for i, w := range words {
		args[i] = s[w.start:w.end]
	}
	args = redactFlags(args)
	var b strings.Builder
	last := 0
	for i, w := range words {
		b.WriteString(s[last:w.start])
		b.WriteString(args[i])
		last = w.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactFlags is redactArgs without the free-text pass on each word (the
// caller is that pass).
func redactFlags(args []string) []string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "--env":
			if i+1 < len(args) {
				args[i+1] = redactEnvItem(args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--env="):
			args[i] = "--env=" + redactEnvItem(strings.TrimPrefix(a, "--env="))
		case strings.HasPrefix(a, "-"):
			name, _, inline := strings.Cut(a, "=")
			if !secretFlag(name) {
				continue
			}
			if inline {
				args[i] = name + "=" + Redaction
			} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				args[i+1] = Redaction
				i++
			}
		}
	}
	return args
}

// deepCopy copies v and everything it points to, so the copy can be
// changed without touching v.
func deepCopy[T any](v T) T {
	return deepcopy.Copy(v)
}

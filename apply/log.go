package apply

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/poolsolve/poolsolve/lloom"
)

// entry is one line of the apply log.
type entry struct {
	Time    string          `json:"time"`
	Event   string          `json:"event"` // begin, step, request, answer, config, done, failed, manual, end
	Step    int             `json:"step,omitempty"`
	Action  string          `json:"action,omitempty"`
	Subject string          `json:"subject,omitempty"`
	Node    string          `json:"node,omitempty"`
	Method  string          `json:"method,omitempty"`
	Route   string          `json:"route,omitempty"`
	Query   string          `json:"query,omitempty"`
	Code    int             `json:"code,omitempty"`
	Sent    json.RawMessage `json:"sent,omitempty"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	Message string          `json:"message,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Log is the append-only JSON-lines log of an apply: every step, request
// and answer, redacted as every other output.
type Log struct {
	mu  sync.Mutex
	f   *os.File
	now func() time.Time
	err error
}

// OpenLog opens path for appending, creating it with mode 0600: answers
// name hosts and runtimes even once redacted.
func OpenLog(path string) (*Log, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return &Log{f: f, now: time.Now}, nil
}

func (l *Log) write(e entry) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Time = l.now().UTC().Format(time.RFC3339Nano)
	e.Message = lloom.RedactText(e.Message)
	e.Error = lloom.RedactText(e.Error)
	e.Query = lloom.RedactText(e.Query)
	e.Sent = redactRaw(e.Sent)
	e.Answer = redactRaw(e.Answer)
	line, err := json.Marshal(e)
	if err == nil {
		_, err = l.f.Write(append(line, '\n'))
	}
	if err != nil && l.err == nil {
		l.err = err
	}
}

// redactRaw is data through lloom's JSON redaction, compacted to one
// line; an answer it cannot read is dropped rather than logged raw.
func redactRaw(data json.RawMessage) json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	r, err := lloom.RedactJSON(data)
	if err != nil {
		return nil
	}
	var buf []byte
	if c, err := compact(r); err == nil {
		buf = c
	}
	return buf
}

func compact(data []byte) ([]byte, error) {
	var v json.RawMessage
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Close closes the file and reports the first write that failed.
func (l *Log) Close() error {
	if l == nil {
		return nil
	}
	err := l.f.Close()
	if l.err != nil {
		return l.err
	}
	return err
}

// Note appends a line of its own: the run's beginning (which plan, how
// many steps the fleet shows done) and its end.
func (l *Log) Note(event, message string) { l.write(entry{Event: event, Message: message}) }

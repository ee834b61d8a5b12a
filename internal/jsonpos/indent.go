package jsonpos

import "io"

// IndentWriter writes the JSON written to it indented as encoding/json's
// Encoder with SetIndent("", indent) writes a value nested depth levels
// deep: white space outside strings is dropped (as the Encoder compacts a
// json.RawMessage), '{' and '[' open a level whose members start on
// lines of their own, empty objects and arrays stay {} and [], ':' is
// followed by a space, and the first line has no indentation (the caller
// writes the value after its key). Input may arrive in pieces of any
// size; it is assumed to be valid JSON. Flush writes what is buffered.
type IndentWriter struct {
	w          io.Writer
	indent     string
	depth      int
	inString   bool
	escaped    bool
	needIndent bool
	buf        []byte
	err        error
}

// NewIndentWriter returns an IndentWriter to w for a value depth levels
// deep.
func NewIndentWriter(w io.Writer, depth int, indent string) *IndentWriter {
	return &IndentWriter{w: w, indent: indent, depth: depth, buf: make([]byte, 0, 2*flushAt)}
}

func (iw *IndentWriter) Write(p []byte) (int, error) {
	if iw.err != nil {
		return 0, iw.err
	}
	buf := iw.buf
	for i := 0; i < len(p); i++ {
		c := p[i]
		if iw.inString {
			if iw.escaped {
				buf = append(buf, c)
				iw.escaped = false
				continue
			}
			// Copy the run up to the next quote or backslash at once.
			j := i
			for j < len(p) && p[j] != '"' && p[j] != '\\' {
				j++
			}
			buf = append(buf, p[i:j]...)
			if j == len(p) {
				break
			}
			buf = append(buf, p[j])
			if p[j] == '\\' {
				iw.escaped = true
			} else {
				iw.inString = false
			}
			i = j
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		if iw.needIndent && c != '}' && c != ']' {
			iw.needIndent = false
			iw.depth++
			buf = iw.newline(buf)
		}
		switch c {
		case '"':
			iw.inString = true
			buf = append(buf, c)
		case '{', '[':
			iw.needIndent = true
			buf = append(buf, c)
		case ',':
			buf = append(buf, c)
			buf = iw.newline(buf)
		case ':':
			buf = append(buf, c, ' ')
		case '}', ']':
			if iw.needIndent {
				iw.needIndent = false
			} else {
				iw.depth--
				buf = iw.newline(buf)
			}
			buf = append(buf, c)
		default:
			buf = append(buf, c)
		}
	}
	iw.buf = buf
	if len(iw.buf) >= flushAt {
		iw.Flush()
	}
	return len(p), iw.err
}

func (iw *IndentWriter) newline(buf []byte) []byte {
	buf = append(buf, '\n')
	for range iw.depth {
		buf = append(buf, iw.indent...)
	}
	return buf
}

// Flush writes what is buffered and returns the first error of the
// underlying writer.
func (iw *IndentWriter) Flush() error {
	if iw.err == nil && len(iw.buf) > 0 {
		_, iw.err = iw.w.Write(iw.buf)
	}
	iw.buf = iw.buf[:0]
	return iw.err
}
